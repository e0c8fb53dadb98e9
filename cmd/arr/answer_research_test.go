package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/arr-dev/arr/commands/research/researchtest"
)

// researchJob is a job as GET /api/v1/research/{id} shows it.
type researchJob struct {
	ID            string      `json:"id"`
	Status        string      `json:"status"`
	Query         string      `json:"query"`
	Mode          string      `json:"mode"`
	Attempts      int         `json:"attempts"`
	WebhookURL    *string     `json:"webhook_url"`
	WebhookSecret string      `json:"webhook_secret"`
	Answer        *answerBody `json:"answer"`
	Error         *struct {
		Status        int
		Code, Message string
		Field         string
	} `json:"error"`
}

// jobEvent is one server-sent event of a job's events stream.
type jobEvent struct{ id, event, data string }

// researchCall sends one request to /api/v1/research[path] and decodes
// the body into a researchJob.
func researchCall(t testing.TB, method, base, key, path string, body any, headers ...string) (int, http.Header, researchJob) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		default:
			raw, _ := json.Marshal(b)
			rd = bytes.NewReader(raw)
		}
	}
	req, _ := http.NewRequest(method, base+"/api/v1/research"+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s /api/v1/research%s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var j researchJob
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatalf("%s /api/v1/research%s: %d %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header, j
}

// jobEvents reads a job's events stream to its end (bounded by the
// client's timeout), after lastID when set; until, when set, is called
// with each event and may stop the read early by returning true.
func jobEvents(t testing.TB, base, key, id, lastID string, until func(jobEvent) bool) []jobEvent {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/research/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := (&http.Client{Timeout: 90 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("events of %s: %v", id, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("events of %s: %d %s", id, resp.StatusCode, b)
	}
	var evs []jobEvent
	var cur jobEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			evs = append(evs, cur)
			if until != nil && until(cur) {
				return evs
			}
			cur = jobEvent{}
		case strings.HasPrefix(line, "id:"):
			cur.id = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "event:"):
			cur.event = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			cur.data = strings.TrimSpace(line[5:])
		}
	}
	return evs
}

func eventNames(evs []jobEvent) string {
	var names []string
	for _, e := range evs {
		names = append(names, e.event)
	}
	return strings.Join(names, ",")
}

// jobHookEntry is one request the standardwebhooks receiver logged, with
// a research job's payload.
type jobHookEntry struct {
	Path, ID string
	Verified bool
	Payload  struct {
		Type string
		Data researchJob
	}
}

func jobHookLog(t testing.TB, r *hookReceiver) []jobHookEntry {
	t.Helper()
	resp, err := http.Get(r.base + "/_log")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l []jobHookEntry
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatal(err)
	}
	return l
}

// goHooks is a webhook endpoint verifying with the Go standardwebhooks
// library: it keeps every verified body per webhook-id.
type goHooks struct {
	mu     sync.Mutex
	secret string
	got    map[string][][]byte
	bad    int
}

func (g *goHooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	defer g.mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(g.secret)
	if err != nil || wh.Verify(body, r.Header) != nil {
		g.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	g.got[r.Header.Get("webhook-id")] = append(g.got[r.Header.Get("webhook-id")], body)
	w.WriteHeader(http.StatusNoContent)
}

// TestResearchJobs runs research jobs through the arr process: created
// (202), their progress streamed and resumed, their result fetched and
// POSTed signed to a webhook (verified with the standardwebhooks npm
// library and the Go one), a job whose process is killed mid-job rerun
// by the next process and delivered once, a job canceled while it runs,
// another account's job missing, and the read model rebuilt without a
// delivery made again.
func TestResearchJobs(t *testing.T) {
	web := researchtest.NewWeb(t)
	sx := researchtest.NewSearXNG(t, web)
	model := researchtest.NewLLM(t)
	hooks := startHookReceiver(t)
	gh := &goHooks{got: map[string][][]byte{}}
	ghts := httptest.NewServer(gh)
	t.Cleanup(ghts.Close)
	ghSrv := ghts.URL
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_SEARCH=searxng", "SEARXNG_URL="+sx.URL, "ARR_ANSWER_LLM_BASE_URL="+model.BaseURL(),
		"ARR_ANSWER_LLM_API_KEY=standin", "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_MASTER_KEY="+testMasterKey, "ARR_WEBHOOK_PRIVATE=allow")
	proc := e.up()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("arr's log:\n%s", proc.logs.String())
		}
	})
	pool, _ := openStore(t, e.dbURL)
	e.createAccount("pro@example.com", "pro")
	e.createAccount("other@example.com", "pro")
	pro, other := e.mint("pro@example.com", "answer").Secret, e.mint("other@example.com", "answer").Secret

	// waitWriting reads id's events until the writing step (the model is
	// held after its first word).
	waitWriting := func(t *testing.T, id string) []jobEvent {
		t.Helper()
		evs := jobEvents(t, e.answer, pro, id, "", func(ev jobEvent) bool { return ev.event == "writing" || ev.event == "done" })
		if evs[len(evs)-1].event != "writing" {
			t.Fatalf("job %s ended before writing: %s", id, eventNames(evs))
		}
		return evs
	}
	var first researchJob
	t.Run("create, progress, result, webhook", func(t *testing.T) {
		model.SetHold(true)
		status, h, j := researchCall(t, "POST", e.answer, pro, "", map[string]any{"q": "What causes spring tides?", "webhook_url": hooks.base + "/job"})
		if status != 202 || j.Status != "queued" || j.Mode != "deep" || h.Get("Location") != "/api/v1/research/"+j.ID || !strings.HasPrefix(j.WebhookSecret, "whsec_") {
			t.Fatalf("create: %d %s %+v", status, h.Get("Location"), j)
		}
		hooks.post(t, "/_secret", j.WebhookSecret)
		evs := waitWriting(t, j.ID)
		model.SetHold(false)
		model.Release()
		rest := jobEvents(t, e.answer, pro, j.ID, evs[len(evs)-1].id, nil)
		if got := eventNames(append(evs, rest...)); got != "queued,started,sources,writing,succeeded,done" {
			t.Fatalf("events: %s", got)
		}
		var done researchJob
		if err := json.Unmarshal([]byte(rest[len(rest)-1].data), &done); err != nil || done.Status != "succeeded" || done.Answer == nil {
			t.Fatalf("done: %v %s", err, rest[len(rest)-1].data)
		}
		var sources struct {
			Sources []struct{ Title, URL string }
		}
		if err := json.Unmarshal([]byte(evs[2].data), &sources); err != nil || len(sources.Sources) == 0 {
			t.Fatalf("sources step: %v %s", err, evs[2].data)
		}
		// Resumed after the sources step: the rest only.
		if got := eventNames(jobEvents(t, e.answer, pro, j.ID, evs[2].id, nil)); got != "writing,succeeded,done" {
			t.Fatalf("resumed after sources: %s", got)
		}
		status, _, first = researchCall(t, "GET", e.answer, pro, "/"+j.ID, nil)
		if status != 200 || first.Status != "succeeded" || first.Answer == nil || first.Answer.Mode != "deep" || first.Attempts != 1 {
			t.Fatalf("get: %d %+v", status, first)
		}
		assertCited(t, *first.Answer)
		hooks.waitLog(t, "the job's webhook", 30*time.Second, func(l []hookEntry) bool { return len(ackedIDs(l, "/job")) == 1 })
		for _, x := range jobHookLog(t, hooks) {
			if x.Path != "/job" {
				continue
			}
			if !x.Verified || x.ID != "msg_"+strings.ReplaceAll(j.ID, "-", "") {
				t.Fatalf("a delivery standardwebhooks does not verify, or of another id: %+v", x)
			}
			if p := x.Payload; p.Type != "research_job.succeeded" || p.Data.ID != j.ID || p.Data.Status != "succeeded" ||
				p.Data.Answer == nil || p.Data.Answer.Answer != first.Answer.Answer {
				t.Fatalf("webhook payload: %+v", p)
			}
		}
	})

	t.Run("another account's job is missing", func(t *testing.T) {
		for _, c := range []struct{ method, path string }{{"GET", "/" + first.ID}, {"DELETE", "/" + first.ID}, {"GET", "/" + first.ID + "/events"}} {
			status, _, j := researchCall(t, c.method, e.answer, other, c.path, nil)
			if status != 404 || j.Error == nil || j.Error.Code != "research_job_not_found" {
				t.Fatalf("%s %s as another account: %d %+v", c.method, c.path, status, j.Error)
			}
		}
		if status, _, j := researchCall(t, "DELETE", e.answer, pro, "/"+first.ID, nil); status != 409 || j.Error == nil || j.Error.Code != "research_job_finished" {
			t.Fatalf("DELETE of a succeeded job: %d %+v", status, j.Error)
		}
	})

	t.Run("restart mid-job", func(t *testing.T) {
		model.SetHold(true)
		status, _, j := researchCall(t, "POST", e.answer, pro, "", map[string]any{"q": "How do neap tides differ?", "webhook_url": ghSrv + "/job2"})
		if status != 202 {
			t.Fatalf("create: %d %+v", status, j)
		}
		gh.mu.Lock()
		gh.secret = j.WebhookSecret
		gh.mu.Unlock()
		waitWriting(t, j.ID)
		proc.kill()
		model.SetHold(false)
		model.Release()
		proc = e.up()
		evs := jobEvents(t, e.answer, pro, j.ID, "", nil)
		if got := eventNames(evs); got != "queued,started,sources,writing,started,sources,writing,succeeded,done" {
			t.Fatalf("events after the restart: %s", got)
		}
		status, _, got := researchCall(t, "GET", e.answer, pro, "/"+j.ID, nil)
		if status != 200 || got.Status != "succeeded" || got.Attempts != 2 || got.Answer == nil {
			t.Fatalf("after the restart: %d %+v", status, got)
		}
		eventually(t, 30*time.Second, "the rerun job's webhook", func() bool {
			var n int
			if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM rm_research_jobs.deliveries WHERE job_id = $1 AND status = 'delivered'`, j.ID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n == 1
		})
		gh.mu.Lock()
		defer gh.mu.Unlock()
		if len(gh.got) != 1 || gh.bad != 0 {
			t.Fatalf("the Go receiver got %d webhook ids (%d unverified), want 1", len(gh.got), gh.bad)
		}
		for id, bodies := range gh.got {
			if len(bodies) != 1 || !strings.Contains(string(bodies[0]), `"research_job.succeeded"`) || !strings.Contains(string(bodies[0]), j.ID) {
				t.Fatalf("webhook %s: %d deliveries, first %s", id, len(bodies), bodies[0])
			}
		}
	})

	t.Run("cancel a running job", func(t *testing.T) {
		model.SetHold(true)
		defer model.SetHold(false)
		cancelled := model.Cancelled()
		status, _, j := researchCall(t, "POST", e.answer, pro, "", map[string]any{"q": "Why are there two tides a day?", "webhook_url": hooks.base + "/job3"})
		if status != 202 {
			t.Fatalf("create: %d %+v", status, j)
		}
		waitWriting(t, j.ID)
		for range 2 { // idempotent
			status, _, got := researchCall(t, "DELETE", e.answer, pro, "/"+j.ID, nil)
			if status != 200 || got.Status != "canceled" || got.Answer != nil {
				t.Fatalf("cancel: %d %+v", status, got)
			}
		}
		if got := eventNames(jobEvents(t, e.answer, pro, j.ID, "", nil)); got != "queued,started,sources,writing,canceled,done" {
			t.Fatalf("events of a canceled job: %s", got)
		}
		eventually(t, 30*time.Second, "the held model call to be cancelled", func() bool { return model.Cancelled() > cancelled })
		var n int
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM rm_research_jobs.deliveries WHERE job_id = $1`, j.ID).Scan(&n); err != nil || n != 0 {
			t.Fatalf("a canceled job has %d deliveries (%v)", n, err)
		}
	})

	t.Run("a rebuild sends nothing again", func(t *testing.T) {
		if _, stderr, code := e.arr("projections", "rebuild", "research_jobs"); code != 0 {
			t.Fatalf("rebuild: %d %s", code, stderr)
		}
		rows, err := pool.Query(t.Context(), `SELECT status, attempts FROM rm_research_jobs.deliveries ORDER BY position`)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var s string
			var a int
			if err := rows.Scan(&s, &a); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s/%d", s, a))
		}
		if strings.Join(got, ",") != "delivered/1,delivered/1" {
			t.Fatalf("deliveries after the rebuild: %v", got)
		}
		if status, _, j := researchCall(t, "GET", e.answer, pro, "/"+first.ID, nil); status != 200 || j.Status != "succeeded" || j.Answer == nil {
			t.Fatalf("after the rebuild: %d %+v", status, j)
		}
	})

	t.Run("recorded like answers", func(t *testing.T) {
		// One AnswerServed per succeeded job (two), none for the canceled
		// one; each job's answer synthesized once (AnswerSynthesized).
		eventually(t, 30*time.Second, "the jobs' AnswerServed events", func() bool {
			var served, synthesized int
			if err := pool.QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE event_type = 'AnswerServed'),
				count(*) FILTER (WHERE event_type = 'AnswerSynthesized') FROM events`).Scan(&served, &synthesized); err != nil {
				t.Fatal(err)
			}
			if served > 2 || synthesized > 2 {
				t.Fatalf("%d AnswerServed and %d AnswerSynthesized for 2 succeeded jobs", served, synthesized)
			}
			return served == 2 && synthesized == 2
		})
	})
}

// TestResearchJobsRefuse: hostile and refused requests to the research
// routes, without ARR_WEBHOOK_PRIVATE: each is a clear 4xx.
func TestResearchJobsRefuse(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_MASTER_KEY="+testMasterKey)
	e.up()
	e.createAccount("free@example.com", "free")
	e.createAccount("pro@example.com", "pro")
	free, pro := e.mint("free@example.com", "answer").Secret, e.mint("pro@example.com", "answer").Secret
	tests := []struct {
		name, method, key, path string
		body                    any
		headers                 []string
		status                  int
		code, field             string
	}{
		{"deep by default on free", "POST", free, "", map[string]any{"q": "what causes tides"}, nil, 403, "pro_plan_required", ""},
		{"q missing", "POST", pro, "", map[string]any{"mode": "deep"}, nil, 400, "q_missing", "q"},
		{"unknown field", "POST", pro, "", map[string]any{"q": "what causes tides", "stream": true}, nil, 400, "unknown_field", "stream"},
		{"not JSON", "POST", pro, "", "{", nil, 400, "invalid_json", ""},
		{"ftp webhook", "POST", pro, "", map[string]any{"q": "what causes tides", "webhook_url": "ftp://127.0.0.1/x"}, nil, 400, "invalid_webhook_url", "webhook_url"},
		{"empty webhook", "POST", pro, "", map[string]any{"q": "what causes tides", "webhook_url": " "}, nil, 400, "invalid_webhook_url", "webhook_url"},
		{"loopback webhook", "POST", pro, "", map[string]any{"q": "what causes tides", "webhook_url": "http://127.0.0.1:9/x"}, nil, 400, "invalid_webhook_url", "webhook_url"},
		{"private webhook", "POST", pro, "", map[string]any{"q": "what causes tides", "webhook_url": "http://10.0.0.1/x"}, nil, 400, "invalid_webhook_url", "webhook_url"},
		{"user info", "POST", pro, "", map[string]any{"q": "what causes tides", "webhook_url": "https://u:p@127.0.0.1/x"}, nil, 400, "invalid_webhook_url", "webhook_url"},
		{"oversized body", "POST", pro, "", `{"q":"` + strings.Repeat("x", 70<<10) + `"}`, nil, 413, "body_too_large", ""},
		{"bad id", "GET", pro, "/nope", nil, nil, 400, "invalid_research_job_id", "id"},
		{"bad id on delete", "DELETE", pro, "/../../x", nil, nil, 404, "", ""},
		{"unknown id", "GET", pro, "/0190a9b2-7c3e-7000-8000-000000000000", nil, nil, 404, "research_job_not_found", ""},
		{"bad Last-Event-ID", "GET", pro, "/0190a9b2-7c3e-7000-8000-000000000000/events", nil, nil, 404, "research_job_not_found", ""},
		{"no key", "GET", "", "/0190a9b2-7c3e-7000-8000-000000000000", nil, nil, 401, "missing_api_key", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, j := researchCall(t, tc.method, e.answer, tc.key, tc.path, tc.body, tc.headers...)
			if status != tc.status || (tc.code != "" && (j.Error == nil || j.Error.Code != tc.code || j.Error.Field != tc.field)) {
				t.Fatalf("got %d %+v, want %d %s %s", status, j.Error, tc.status, tc.code, tc.field)
			}
		})
	}
	// A quick job of the free plan is taken; its bad Last-Event-ID is refused.
	status, _, j := researchCall(t, "POST", e.answer, free, "", map[string]any{"q": "what causes tides", "mode": "quick"})
	if status != 202 || j.Status != "queued" || j.WebhookURL != nil {
		t.Fatalf("a quick job on free: %d %+v", status, j)
	}
	status, _, bad := researchCall(t, "GET", e.answer, free, "/"+j.ID+"/events", nil, "Last-Event-ID", "-1")
	if status != 400 || bad.Error == nil || bad.Error.Code != "invalid_last_event_id" {
		t.Fatalf("bad Last-Event-ID: %d %+v", status, bad.Error)
	}
}
