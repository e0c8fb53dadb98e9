package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/mail/mailtest"
	"github.com/arr-dev/arr/commands/research/researchtest"
	"github.com/arr-dev/arr/domain/answer"
)

type answerBody struct {
	Query         string `json:"query"`
	ResolvedQuery string `json:"resolved_query"`
	Answer        string `json:"answer"`
	Citations     []struct {
		Index, Start, End int
	} `json:"citations"`
	Sources []struct {
		Title, URL, Content, Snippet string
		PublishedDate                *string `json:"published_date"`
	} `json:"sources"`
	Tier         string   `json:"tier"`
	Mode         string   `json:"mode"`
	Cached       bool     `json:"cached"`
	Synthesis    string   `json:"synthesis"`
	AnswerFound  *bool    `json:"answer_found"`
	SubQuestions []string `json:"sub_questions"`
	Error        *struct {
		Status        int
		Code, Message string
		Field         string
	} `json:"error"`
}

func askAnswer(t testing.TB, method, base, key string, params map[string]string) (int, http.Header, answerBody) {
	t.Helper()
	var req *http.Request
	if method == http.MethodGet {
		v := url.Values{}
		for k, p := range params {
			v.Set(k, p)
		}
		req, _ = http.NewRequest(method, base+"/api/v1/answer?"+v.Encode(), nil)
	} else {
		b, _ := json.Marshal(params)
		req, _ = http.NewRequest(method, base+"/api/v1/answer", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s answer: %v", method, err)
	}
	defer resp.Body.Close()
	var out answerBody
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("answer body: %v", err)
	}
	return resp.StatusCode, resp.Header, out
}

// assertCited: every [n] resolves to a returned source with an absolute
// URL, and every returned source is cited.
func assertCited(t testing.TB, a answerBody) {
	t.Helper()
	if len(a.Sources) == 0 || a.Answer == "" {
		t.Fatalf("empty answer: %+v", a)
	}
	cited := map[int]bool{}
	for _, n := range answer.Markers(a.Answer) {
		if n < 1 || n > len(a.Sources) {
			t.Fatalf("[%d] refers to nothing (%d sources): %q", n, len(a.Sources), a.Answer)
		}
		cited[n] = true
	}
	for i, s := range a.Sources {
		u, err := url.Parse(s.URL)
		if err != nil || !u.IsAbs() || (u.Host == "" && u.Scheme != "file") {
			t.Fatalf("source %d URL %q is not absolute", i+1, s.URL)
		}
		if !cited[i+1] {
			t.Fatalf("source %d returned but not cited: %q", i+1, a.Answer)
		}
	}
}

func TestAnswerService(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the arr binary against PostgreSQL")
	}
	web := researchtest.NewWeb(t)
	sx := researchtest.NewSearXNG(t, web)
	model := researchtest.NewLLM(t)
	clock := filepath.Join(t.TempDir(), "clock")
	if err := os.WriteFile(clock, []byte("0s"), 0o644); err != nil {
		t.Fatal(err)
	}
	mail := mailtest.Start(t, mailtest.Options{})
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "SMTP_URL="+mail.URL, "ARR_SEARCH=searxng", "SEARXNG_URL="+sx.URL, "ARR_ANSWER_LLM_BASE_URL="+model.BaseURL(),
		"ARR_ANSWER_LLM_API_KEY=standin", "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_TEST_CLOCK_FILE="+clock, "ARR_ANSWER_SEED=off")
	e.up()
	e.createAccount("free@example.com", "free")
	e.createAccount("pro@example.com", "pro")
	freeKey, proKey := e.mint("free@example.com", "answer"), e.mint("pro@example.com", "answer")
	free, pro := freeKey.Secret, proKey.Secret

	t.Run("bad inputs", func(t *testing.T) {
		tests := []struct {
			name, method, key string
			params            map[string]string
			status            int
			code, field, msg  string
		}{
			{"q missing", "GET", free, map[string]string{"tier": "free"}, 400, "q_missing", "q", "q is required"},
			{"q missing in body", "POST", free, map[string]string{"mode": "quick"}, 400, "q_missing", "q", "q is required"},
			{"q empty", "GET", free, map[string]string{"q": "   "}, 400, "q_empty", "q", "q is empty"},
			{"q too short", "POST", free, map[string]string{"q": "ab"}, 400, "q_too_short", "q", "at least 3"},
			{"q 501 characters", "POST", free, map[string]string{"q": strings.Repeat("x", 501)}, 400, "q_too_long", "q", "501 characters; at most 500"},
			{"tier gold", "GET", free, map[string]string{"q": "what causes tides", "tier": "gold"}, 400, "invalid_tier", "tier", "tier must be free or pro"},
			{"mode slow", "GET", free, map[string]string{"q": "what causes tides", "mode": "slow"}, 400, "invalid_mode", "mode", "mode must be quick or deep"},
			{"deep on free", "POST", free, map[string]string{"q": "what causes tides", "mode": "deep"}, 403, "pro_plan_required", "", "mode=deep needs the Pro plan"},
			{"pro tier on free", "GET", free, map[string]string{"q": "what causes tides", "tier": "pro"}, 403, "pro_plan_required", "", "tier=pro needs the Pro plan"},
			{"no key", "GET", "", map[string]string{"q": "what causes tides"}, 401, "missing_api_key", "", "no API key"},
			{"bad key", "GET", "arr_ans_nope", map[string]string{"q": "what causes tides"}, 401, "invalid_api_key", "", "API key"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				status, _, b := askAnswer(t, tc.method, e.answer, tc.key, tc.params)
				if status != tc.status || b.Error == nil || b.Error.Code != tc.code || b.Error.Field != tc.field || !strings.Contains(b.Error.Message, tc.msg) {
					t.Fatalf("got %d %+v, want %d %s %q", status, b.Error, tc.status, tc.code, tc.msg)
				}
			})
		}
		if sx.Hits() != 0 || model.Hits() != 0 {
			t.Fatalf("refused requests reached search (%d) or the model (%d)", sx.Hits(), model.Hits())
		}
	})

	t.Run("quick answer, cache hit, expiry after 6 hours", func(t *testing.T) {
		status, _, a := askAnswer(t, "POST", e.answer, free, map[string]string{"q": "What causes spring tides?"})
		if status != 200 || a.Cached || a.Synthesis != "llm" || a.Tier != "free" || a.Mode != "quick" || a.Query != "What causes spring tides?" {
			t.Fatalf("first ask: %d %+v", status, a)
		}
		assertCited(t, a)
		if strings.Contains(a.Answer, "[42]") {
			t.Fatalf("the model's marker that refers to nothing was kept: %q", a.Answer)
		}
		for _, s := range a.Sources {
			for _, junk := range researchtest.Boilerplate {
				if strings.Contains(s.Content, junk) {
					t.Fatalf("boilerplate %q in %s", junk, s.URL)
				}
			}
		}
		searches, completions, pages := sx.Hits(), model.Hits(), web.Hits()
		if searches != 1 || completions != 1 || pages == 0 {
			t.Fatalf("first ask made %d searches, %d completions, %d page fetches", searches, completions, pages)
		}
		// The same question, spelled differently, within 6 hours.
		for _, q := range []string{"what causes spring tides", "  WHAT causes spring tides?!"} {
			status, _, b := askAnswer(t, "GET", e.answer, free, map[string]string{"q": q})
			if status != 200 || !b.Cached || b.Answer != a.Answer || b.Query != strings.TrimSpace(q) {
				t.Fatalf("repeat %q: %d %+v", q, status, b)
			}
			assertCited(t, b)
		}
		if sx.Hits() != searches || model.Hits() != completions || web.Hits() != pages {
			t.Fatalf("cache hits reached the stand-ins: search %d->%d, model %d->%d, web %d->%d", searches, sx.Hits(), completions, model.Hits(), pages, web.Hits())
		}
		// 5h59m later: still cached; 6h01m later: fresh.
		setClock(t, clock, "5h59m")
		if _, _, b := askAnswer(t, "GET", e.answer, free, map[string]string{"q": "What causes spring tides?"}); !b.Cached {
			t.Fatalf("5h59m later: not cached")
		}
		setClock(t, clock, "6h1m")
		status, _, c := askAnswer(t, "GET", e.answer, free, map[string]string{"q": "What causes spring tides?"})
		if status != 200 || c.Cached {
			t.Fatalf("6h01m later: %d cached=%v", status, c.Cached)
		}
		assertCited(t, c)
		if sx.Hits() != searches+1 || model.Hits() != completions+1 {
			t.Fatalf("a fresh answer after expiry made %d searches and %d completions", sx.Hits()-searches, model.Hits()-completions)
		}
	})

	t.Run("deep mode", func(t *testing.T) {
		before := sx.Hits()
		status, _, a := askAnswer(t, "POST", e.answer, pro, map[string]string{"q": "Why are some tides bigger than others?", "tier": "pro", "mode": "deep"})
		if status != 200 || a.Mode != "deep" || a.Tier != "pro" || len(a.SubQuestions) < 2 {
			t.Fatalf("deep: %d %+v", status, a)
		}
		assertCited(t, a)
		if n := sx.Hits() - before; n < 3 {
			t.Fatalf("deep mode made %d searches", n)
		}
		multi := 0
		for _, s := range a.Sources {
			if sx.FoundBy(s.URL) > 1 {
				multi++
			}
		}
		if multi == 0 {
			t.Fatalf("no cited source was found by more than one search: %+v", a.Sources)
		}
	})

	t.Run("model down: extractive", func(t *testing.T) {
		model.SetDown(true)
		defer model.SetDown(false)
		status, _, a := askAnswer(t, "GET", e.answer, free, map[string]string{"q": "How large is the tidal range in the Bay of Fundy?"})
		if status != 200 || a.Synthesis != "extractive" || a.Cached {
			t.Fatalf("%d %+v", status, a)
		}
		assertCited(t, a)
		if !strings.Contains(a.Answer, "16 metres") {
			t.Fatalf("extractive answer misses the fact: %q", a.Answer)
		}
	})

	pool, _ := openStore(t, e.dbURL)
	t.Run("search down: 503, nothing cached", func(t *testing.T) {
		sx.SetDown(true)
		defer sx.SetDown(false)
		q := "Why does bread rise in the oven?"
		status, h, a := askAnswer(t, "GET", e.answer, free, map[string]string{"q": q})
		if status != 503 || h.Get("Retry-After") == "" || a.Error == nil || a.Error.Code != "search_unavailable" {
			t.Fatalf("%d %v %+v", status, h, a.Error)
		}
		var n int
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE event_type = 'AnswerSynthesized' AND data::jsonb->>'question' = $1`, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("%d AnswerSynthesized events for a failed search", n)
		}
		sx.SetDown(false)
		if status, _, a := askAnswer(t, "GET", e.answer, free, map[string]string{"q": q}); status != 200 || a.Cached {
			t.Fatalf("after search is back: %d cached=%v", status, a.Cached)
		}
	})

	t.Run("read models equal a rebuild", func(t *testing.T) {
		waitCaughtUp(t, pool, 30*time.Second)
		time.Sleep(300 * time.Millisecond) // the served-answer recorder flushes every 100ms
		waitCaughtUp(t, pool, 30*time.Second)
		tables := map[string]string{"rm_answer_cache.answers": "cache_key", "rm_answer_usage.answer_usage_daily": "account_id, t.day, t.key_id"}
		before := snapshotTables(t, pool, tables)
		if !strings.Contains(before["rm_answer_usage.answer_usage_daily"], `"cached"`) || before["rm_answer_cache.answers"] == "" {
			t.Fatalf("read models empty: %v", before)
		}
		// The account page shows the answers per key and day.
		browser := newWeb(t)
		if p := signIn(t, browser, mail, e.answer, "free@example.com"); p.status != 200 && p.status != 303 {
			t.Fatalf("signing in on the answer page: %d", p.status)
		}
		page := browser.get(e.answer + "/account")
		hint := freeKey.Secret[len(freeKey.Secret)-4:]
		if !strings.Contains(page.body, `id="answer-usage"`) || !strings.Contains(page.body, hint) {
			t.Fatalf("no answer usage for key …%s on the account page:\n%s", hint, page.body)
		}
		e.mustArr(nil, "projections", "rebuild", "answer_cache")
		e.mustArr(nil, "projections", "rebuild", "answer_usage")
		after := snapshotTables(t, pool, tables)
		for k := range tables {
			if before[k] != after[k] {
				t.Fatalf("%s differs after rebuild\nbefore %s\nafter  %s", k, before[k], after[k])
			}
		}
	})
}

func setClock(t testing.TB, path, offset string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(offset), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond) // the binary re-reads it every 20ms
}

func snapshotTables(t testing.TB, pool *pgxpool.Pool, tables map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for table, key := range tables {
		var js *string
		if err := pool.QueryRow(context.Background(), fmt.Sprintf(`SELECT json_agg(t ORDER BY t.%s)::text FROM %s t`, key, table)).Scan(&js); err != nil {
			t.Fatalf("snapshot of %s: %v", table, err)
		}
		if js != nil {
			out[table] = *js
		}
	}
	return out
}
