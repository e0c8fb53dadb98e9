package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// askAnswerJSON posts body to /api/v1/answer as it is.
func askAnswerJSON(t testing.TB, base, key, body string) (int, answerBody) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/answer", bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST answer: %v", err)
	}
	defer resp.Body.Close()
	var out answerBody
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("answer body: %v", err)
	}
	return resp.StatusCode, out
}

// askAnswerQuery sends GET /api/v1/answer?raw.
func askAnswerQuery(t testing.TB, base, key, raw string) (int, answerBody) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/answer?"+raw, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET answer: %v", err)
	}
	defer resp.Body.Close()
	var out answerBody
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("answer body: %v", err)
	}
	return resp.StatusCode, out
}

// sourceHosts is the set of the answer's sources' hosts (without port).
func sourceHosts(t testing.TB, a answerBody) map[string]bool {
	t.Helper()
	hosts := map[string]bool{}
	for _, s := range a.Sources {
		u, err := url.Parse(s.URL)
		if err != nil {
			t.Fatalf("source URL %q: %v", s.URL, err)
		}
		hosts[u.Hostname()] = true
	}
	return hosts
}

// TestAnswerDomainAndDateFilters: two loopback sites under two host names
// (127.0.0.1 and localhost) are indexed, one page dated only by an old
// Last-Modified, one by article:published_time and one by JSON-LD;
// include_domains keeps one host's sources, exclude_domains drops them, a
// time_range leaves the old page out, and every source carries its
// published_date. Bad filters are 400s naming the field; the filters are
// in the cache key and recorded in AnswerSynthesized, the dates in
// DocumentIndexed. Every request goes to loopback.
func TestAnswerDomainAndDateFilters(t *testing.T) {
	recent := time.Now().UTC().AddDate(0, 0, -3).Format("2006-01-02")
	recentLD := time.Now().UTC().AddDate(0, 0, -10).Format("2006-01-02")
	const oldModified = "Mon, 01 Jan 2001 10:00:00 GMT"
	pages := map[string]struct{ head, lastModified, title, text string }{
		"/old-keeper": {"", oldModified, "The old keeper's log",
			"The lamp of the north pier lighthouse is powered by paraffin, and the keeper trims its wick every evening."},
		"/new-lamp": {`<meta property="article:published_time" content="` + recent + `T09:00:00Z">`, oldModified, "The new lamp",
			"The lamp of the north pier lighthouse is powered by a solar-charged battery since 2019."},
		"/lens": {`<script type="application/ld+json">{"@context":"https://schema.org","@type":"Article","datePublished":"` + recentLD + `"}</script>`, "", "The lens",
			"The lamp of the north pier lighthouse shines through a Fresnel lens that is powered by clockwork."},
	}
	serve := func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if p.lastModified != "" {
			w.Header().Set("Last-Modified", p.lastModified)
		}
		_, _ = w.Write([]byte("<!doctype html><html><head><title>" + p.title + "</title>" + p.head + "</head><body><article><h1>" + p.title + "</h1><p>" + p.text + "</p></article></body></html>"))
	}
	ipSite := httptest.NewServer(http.HandlerFunc(serve)) // 127.0.0.1
	t.Cleanup(ipSite.Close)
	nameSrv := httptest.NewServer(http.HandlerFunc(serve))
	t.Cleanup(nameSrv.Close)
	nameSite := strings.Replace(nameSrv.URL, "127.0.0.1", "localhost", 1)
	if !strings.HasPrefix(nameSite, "http://localhost:") {
		t.Fatalf("the second site's URL %q", nameSite)
	}

	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off", "ARR_ANSWER_LLM_BASE_URL=http://127.0.0.1:1/v1")
	p := e.up()
	e.createAccount("filters@example.com", "free")
	key := e.mint("filters@example.com", "answer").Secret

	o, stderr, code := indexAdd(t, e, ipSite.URL+"/old-keeper", nameSite+"/new-lamp", nameSite+"/lens")
	if code != 0 || o.Added != 3 {
		t.Fatalf("indexing: exit %d %+v\n%s\n%s", code, o, stderr, p.logs.String())
	}
	oldURL, newURL, lensURL := ipSite.URL+"/old-keeper", nameSite+"/new-lamp", nameSite+"/lens"
	dates := map[string]string{oldURL: "2001-01-01", newURL: recent, lensURL: recentLD}
	checkDates := func(t *testing.T, a answerBody) {
		t.Helper()
		for _, s := range a.Sources {
			if s.PublishedDate == nil || *s.PublishedDate != dates[s.URL] {
				t.Errorf("source %s published_date %v, want %q", s.URL, s.PublishedDate, dates[s.URL])
			}
		}
	}
	const q = `"q":"What powers the lamp of the north pier lighthouse?"`

	t.Run("no filter: both hosts", func(t *testing.T) {
		status, a := askAnswerJSON(t, e.answer, key, `{`+q+`}`)
		if status != 200 {
			t.Fatalf("%d %+v", status, a)
		}
		assertCited(t, a)
		if h := sourceHosts(t, a); !h["127.0.0.1"] || !h["localhost"] {
			t.Fatalf("want sources from both hosts, got %v: %+v", h, a.Sources)
		}
		checkDates(t, a)
	})
	t.Run("include_domains keeps one host", func(t *testing.T) {
		status, a := askAnswerJSON(t, e.answer, key, `{`+q+`,"include_domains":["LOCALHOST"]}`)
		if status != 200 {
			t.Fatalf("%d %+v", status, a)
		}
		assertCited(t, a)
		if h := sourceHosts(t, a); len(h) != 1 || !h["localhost"] {
			t.Fatalf("include localhost: hosts %v", h)
		}
		checkDates(t, a)
		// GET: repeated and comma-separated names.
		status, a = askAnswerQuery(t, e.answer, key, "q=What+powers+the+lamp+of+the+north+pier+lighthouse%3F&include_domains=127.0.0.1,example.org&include_domains=docs.example.com")
		if status != 200 {
			t.Fatalf("GET %d %+v", status, a)
		}
		if h := sourceHosts(t, a); len(h) != 1 || !h["127.0.0.1"] {
			t.Fatalf("GET include 127.0.0.1: hosts %v", h)
		}
		checkDates(t, a)
	})
	t.Run("exclude_domains drops a host", func(t *testing.T) {
		status, a := askAnswerJSON(t, e.answer, key, `{`+q+`,"exclude_domains":["localhost"]}`)
		if status != 200 {
			t.Fatalf("%d %+v", status, a)
		}
		assertCited(t, a)
		if h := sourceHosts(t, a); h["localhost"] || !h["127.0.0.1"] {
			t.Fatalf("exclude localhost: hosts %v", h)
		}
		if a.Sources[0].URL != oldURL || *a.Sources[0].PublishedDate != "2001-01-01" {
			t.Fatalf("the old page dated by Last-Modified: %+v", a.Sources[0])
		}
		// Only names the index does not hold: nothing to cite.
		status, a = askAnswerJSON(t, e.answer, key, `{`+q+`,"include_domains":["example.com"]}`)
		if status != 200 || a.Synthesis != "no_sources" || len(a.Sources) != 0 {
			t.Fatalf("include example.com: %d %+v", status, a)
		}
	})
	t.Run("time_range leaves the old page out", func(t *testing.T) {
		status, a := askAnswerJSON(t, e.answer, key, `{`+q+`,"time_range":"month"}`)
		if status != 200 {
			t.Fatalf("%d %+v", status, a)
		}
		assertCited(t, a)
		for _, s := range a.Sources {
			if s.URL == oldURL {
				t.Fatalf("time_range=month cited the 2001 page: %+v", a.Sources)
			}
		}
		checkDates(t, a)
		// A window around the old page's date keeps only it.
		status, a = askAnswerQuery(t, e.answer, key, "q=What+powers+the+lamp+of+the+north+pier+lighthouse%3F&start_date=2000-12-31&end_date=2001-01-01")
		if status != 200 || len(a.Sources) != 1 || a.Sources[0].URL != oldURL {
			t.Fatalf("start_date..end_date around 2001-01-01: %d %+v", status, a)
		}
		// A window after the JSON-LD page's date leaves it out.
		status, a = askAnswerJSON(t, e.answer, key, `{`+q+`,"start_date":"`+time.Now().UTC().AddDate(0, 0, -5).Format("2006-01-02")+`"}`)
		if status != 200 || len(a.Sources) != 1 || a.Sources[0].URL != newURL {
			t.Fatalf("start_date 5 days back: %d %+v", status, a)
		}
	})
	t.Run("bad filters: 400 naming the field", func(t *testing.T) {
		for body, field := range map[string]string{
			`{` + q + `,"include_domains":"localhost"}`:                                   "include_domains",
			`{` + q + `,"include_domains":["https://localhost/"]}`:                        "include_domains",
			`{` + q + `,"exclude_domains":["localhost:8080"]}`:                            "exclude_domains",
			`{` + q + `,"include_domains":["localhost"],"exclude_domains":["LocalHost"]}`: "exclude_domains",
			`{` + q + `,"include_domains":["a.com","b.com","c.com","d.com","e.com","f.com","g.com","h.com","i.com","j.com","k.com","l.com","m.com","n.com","o.com","p.com","q.com","r.com","s.com","t.com","u.com"]}`: "include_domains",
			`{` + q + `,"time_range":"decade"}`:                             "time_range",
			`{` + q + `,"time_range":7}`:                                    "time_range",
			`{` + q + `,"time_range":"week","start_date":"2024-01-01"}`:     "time_range",
			`{` + q + `,"start_date":"01/02/2024"}`:                         "start_date",
			`{` + q + `,"end_date":"2024-02-30"}`:                           "end_date",
			`{` + q + `,"start_date":"2024-03-01","end_date":"2024-02-01"}`: "start_date",
		} {
			status, a := askAnswerJSON(t, e.answer, key, body)
			if status != 400 || a.Error == nil || a.Error.Field != field || a.Error.Code == "" || a.Error.Message == "" {
				t.Errorf("%s: %d %+v, want 400 on %s", body, status, a.Error, field)
			}
		}
		status, a := askAnswerQuery(t, e.answer, key, "q=lighthouse+lamp&exclude_domains=*.localhost")
		if status != 400 || a.Error == nil || a.Error.Field != "exclude_domains" {
			t.Errorf("GET a wildcard: %d %+v", status, a.Error)
		}
	})
	t.Run("filters are in the cache key and recorded", func(t *testing.T) {
		status, a := askAnswerJSON(t, e.answer, key, `{`+q+`,"include_domains":["localhost"]}`)
		if status != 200 || !a.Cached || sourceHosts(t, a)["127.0.0.1"] {
			t.Fatalf("the same filters again: %d cached=%v %+v", status, a.Cached, a.Sources)
		}
		status, a = askAnswerJSON(t, e.answer, key, `{`+q+`,"include_domains":["127.0.0.1"]}`)
		if status != 200 || sourceHosts(t, a)["localhost"] {
			t.Fatalf("other filters share the cache entry: %d %+v", status, a.Sources)
		}
		pool, _ := openStore(t, e.dbURL)
		ctx := context.Background()
		var filters string
		if err := pool.QueryRow(ctx, `SELECT data::jsonb->>'filters' FROM events WHERE event_type = 'AnswerSynthesized' AND schema_version = 4
			AND data::jsonb->'filters'->>'time_range' = 'month'`).Scan(&filters); err != nil {
			t.Fatalf("no AnswerSynthesized records time_range=month: %v", err)
		}
		var f struct {
			TimeRange string `json:"time_range"`
			StartDate string `json:"start_date"`
			EndDate   string `json:"end_date"`
		}
		if err := json.Unmarshal([]byte(filters), &f); err != nil || f.StartDate == "" || f.EndDate != time.Now().UTC().Format("2006-01-02") {
			t.Fatalf("recorded filters %s: %v", filters, err)
		}
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE event_type = 'AnswerSynthesized' AND data::jsonb->'filters'->'exclude_domains' = '["localhost"]'::jsonb`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("AnswerSynthesized with exclude_domains [localhost]: %d %v", n, err)
		}
		rows, err := pool.Query(ctx, `SELECT data::jsonb->>'url', coalesce(data::jsonb->>'published', '') FROM events WHERE event_type = 'DocumentIndexed' AND schema_version = 2`)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for rows.Next() {
			var u, d string
			if err := rows.Scan(&u, &d); err != nil {
				t.Fatal(err)
			}
			got[u] = d
		}
		if rows.Err() != nil || len(got) != 3 || got[oldURL] != "2001-01-01" || got[newURL] != recent || got[lensURL] != recentLD {
			t.Fatalf("DocumentIndexed dates: %v %v", got, rows.Err())
		}
	})
}
