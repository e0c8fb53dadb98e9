package research_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/adapters/websearch"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain/answer"
)

// filterWeb is two loopback sites, one under 127.0.0.1 and one under
// localhost, and a search engine (SearXNG's and Brave's APIs) that returns
// pages of both whatever site: terms the query holds, so arr's own
// filtering is what the test sees. It counts the pages fetched.
type filterWeb struct {
	ipSite, nameSite string
	engine           *httptest.Server
	mu               sync.Mutex
	queries          []string
	fetched          map[string]int
	recent           string
}

func newFilterWeb(t *testing.T) *filterWeb {
	t.Helper()
	fw := &filterWeb{fetched: map[string]int{}, recent: time.Now().UTC().AddDate(0, 0, -2).Format(answer.DateLayout)}
	pages := map[string]struct{ head, lastModified, text string }{
		"/old": {"", "Sat, 01 Jan 2005 12:00:00 GMT", "The lamp of the harbour lighthouse is powered by paraffin and trimmed every evening."},
		"/new": {`<meta property="article:published_time" content="` + fw.recent + `T08:00:00Z">`, "", "The lamp of the harbour lighthouse is powered by a solar battery since the refit."},
	}
	site := func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		fw.mu.Lock()
		fw.fetched[r.Host+r.URL.Path]++
		fw.mu.Unlock()
		if p.lastModified != "" {
			w.Header().Set("Last-Modified", p.lastModified)
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><head><title>Lamp</title>" + p.head + "</head><body><article><h1>The harbour lamp</h1><p>" + p.text + "</p></article></body></html>"))
	}
	a := httptest.NewServer(http.HandlerFunc(site))
	t.Cleanup(a.Close)
	b := httptest.NewServer(http.HandlerFunc(site))
	t.Cleanup(b.Close)
	fw.ipSite, fw.nameSite = a.URL, strings.Replace(b.URL, "127.0.0.1", "localhost", 1)
	fw.engine = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fw.mu.Lock()
		fw.queries = append(fw.queries, r.URL.Query().Get("q"))
		fw.mu.Unlock()
		urls := []string{fw.ipSite + "/old", fw.nameSite + "/new", fw.nameSite + "/old"}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/res/v1/web/search" { // Brave
			var res []map[string]string
			for _, u := range urls {
				res = append(res, map[string]string{"title": "Lamp", "url": u, "description": "The harbour lamp"})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"web": map[string]any{"results": res}})
			return
		}
		var res []map[string]string
		for _, u := range urls {
			res = append(res, map[string]string{"title": "Lamp", "url": u, "content": "The harbour lamp"})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"results": res})
	}))
	t.Cleanup(fw.engine.Close)
	return fw
}

func (fw *filterWeb) lastQuery() string {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return fw.queries[len(fw.queries)-1]
}

func (fw *filterWeb) fetchedFrom(host string) int {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	n := 0
	for k, c := range fw.fetched {
		if strings.HasPrefix(k, host+":") {
			n += c
		}
	}
	return n
}

// TestWebSearchFilters: with SearXNG and with Brave, the domain filters go
// to the engine as site: terms and are enforced on its results before any
// page is fetched, whatever it returned; a window of dates keeps only the
// pages dated inside it (the old page is dated by Last-Modified, the new
// one by article:published_time), and every source carries its date.
func TestWebSearchFilters(t *testing.T) {
	fw := newFilterWeb(t)
	sx, err := websearch.NewSearXNG(fw.engine.URL, 0)
	if err != nil {
		t.Fatal(err)
	}
	brave, err := websearch.NewBrave(fw.engine.URL, "k", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, engine := range []research.Searcher{sx, brave} {
		t.Run(engine.Name(), func(t *testing.T) {
			r, err := research.New(research.Config{Search: engine, Fetch: webpage.New(webpage.Config{AllowPrivate: true})})
			if err != nil {
				t.Fatal(err)
			}
			answerWith := func(in answer.FilterInput, mode string) research.Result {
				t.Helper()
				req := ask(t, "What powers the lamp of the harbour lighthouse?", "pro", mode)
				if req.Filters, err = answer.ParseFilters(in, time.Now()); err != nil {
					t.Fatal(err)
				}
				res, err := r.Answer(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			hosts := func(res research.Result) map[string]bool {
				out := map[string]bool{}
				for _, s := range res.Sources {
					out[research.HostOf(s.URL)] = true
				}
				return out
			}
			res := answerWith(answer.FilterInput{}, "quick")
			if h := hosts(res); !h["127.0.0.1"] || !h["localhost"] {
				t.Fatalf("no filter: hosts %v %+v", h, res.Sources)
			}
			for _, s := range res.Sources {
				want := "2005-01-01"
				if strings.HasSuffix(s.URL, "/new") {
					want = fw.recent
				}
				if s.PublishedDate == nil || *s.PublishedDate != want {
					t.Fatalf("%s published_date %v, want %s", s.URL, s.PublishedDate, want)
				}
			}

			before := fw.fetchedFrom("127.0.0.1")
			res = answerWith(answer.FilterInput{IncludeDomains: []string{"localhost"}}, "quick")
			if q := fw.lastQuery(); !strings.HasSuffix(q, " site:localhost") {
				t.Fatalf("include: the engine was asked %q", q)
			}
			if h := hosts(res); len(h) != 1 || !h["localhost"] {
				t.Fatalf("include localhost: hosts %v", h)
			}
			if n := fw.fetchedFrom("127.0.0.1"); n != before {
				t.Fatalf("include localhost fetched %d pages of 127.0.0.1", n-before)
			}

			res = answerWith(answer.FilterInput{ExcludeDomains: []string{"localhost", "example.org"}}, "deep")
			if q := fw.lastQuery(); !strings.Contains(q, " -site:localhost -site:example.org") {
				t.Fatalf("exclude: the engine was asked %q", q)
			}
			if h := hosts(res); len(h) != 1 || !h["127.0.0.1"] {
				t.Fatalf("exclude localhost (deep): hosts %v", h)
			}

			res = answerWith(answer.FilterInput{IncludeDomains: []string{"127.0.0.1", "localhost"}, TimeRange: "year"}, "quick")
			if q := fw.lastQuery(); !strings.HasSuffix(q, " site:127.0.0.1 OR site:localhost") {
				t.Fatalf("two names: the engine was asked %q", q)
			}
			if len(res.Sources) != 1 || !strings.HasSuffix(res.Sources[0].URL, "/new") || *res.Sources[0].PublishedDate != fw.recent {
				t.Fatalf("time_range=year: %+v", res.Sources)
			}
			res = answerWith(answer.FilterInput{EndDate: "2004-12-31"}, "quick")
			if res.Synthesis != answer.NoSources || len(res.Sources) != 0 {
				t.Fatalf("end_date before every page: %+v", res)
			}
		})
	}
}
