package researchtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// SearXNG is a search engine over the stand-in site's articles that answers
// in SearXNG's JSON format (GET /search?q=…&format=json). An article
// matches when its title or text shares a term of four or more letters
// with the query; results are ordered by how many terms they share.
type SearXNG struct {
	*httptest.Server
	web     *Web
	hits    atomic.Int64
	down    atomic.Bool
	mu      sync.Mutex
	queries []string
	served  map[string][]string // query -> URLs returned
}

// NewSearXNG starts the engine over web's articles.
func NewSearXNG(t Cleaner, web *Web) *SearXNG {
	s := &SearXNG{web: web, served: map[string][]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Hits is how many searches were served (including failed ones).
func (s *SearXNG) Hits() int64 { return s.hits.Load() }

// SetDown makes every search fail with 502 (true) or work again.
func (s *SearXNG) SetDown(down bool) { s.down.Store(down) }

// Queries returns the queries received, in order.
func (s *SearXNG) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

// FoundBy returns how many distinct queries returned url.
func (s *SearXNG) FoundBy(url string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, urls := range s.served {
		for _, u := range urls {
			if u == url {
				n++
				break
			}
		}
	}
	return n
}

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		if len(w) >= 4 {
			out[strings.TrimSuffix(w, "s")] = true
		}
	}
	return out
}

func (s *SearXNG) serve(w http.ResponseWriter, r *http.Request) {
	s.hits.Add(1)
	if s.down.Load() {
		http.Error(w, "upstream engines failed", http.StatusBadGateway)
		return
	}
	q := r.URL.Query().Get("q")
	if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" || q == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	qw := words(q)
	type result struct {
		URL     string  `json:"url"`
		Title   string  `json:"title"`
		Content string  `json:"content"`
		Engine  string  `json:"engine"`
		Score   float64 `json:"score"`
	}
	var results []result
	for _, a := range Articles {
		n := 0
		for wd := range words(a.Title + " " + strings.Join(a.Paragraphs, " ")) {
			if qw[wd] {
				n++
			}
		}
		if n > 0 {
			results = append(results, result{URL: s.web.URL(a.Slug), Title: a.Title, Content: a.Paragraphs[0][:60] + "…", Engine: "standin", Score: float64(n)})
		}
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].Score > results[j].Score })
	s.mu.Lock()
	s.queries = append(s.queries, q)
	for _, res := range results {
		s.served[q] = append(s.served[q], res.URL)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"query": q, "number_of_results": len(results), "results": results, "answers": []string{}, "suggestions": []string{}})
}
