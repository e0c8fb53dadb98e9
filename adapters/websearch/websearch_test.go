package websearch_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/arr-dev/arr/adapters/websearch"
	"github.com/arr-dev/arr/domain"
)

func TestSearXNGAndBrave(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/search":
			if r.URL.Query().Get("format") != "json" || r.URL.Query().Get("q") != "tides" {
				http.Error(w, "bad", 400)
				return
			}
			_, _ = w.Write([]byte(`{"query":"tides","number_of_results":3,"results":[
				{"url":"https://a.example/tides","title":"Tides","content":"About tides","engine":"duckduckgo","score":1.0},
				{"url":"/relative","title":"Relative","content":"dropped"},
				{"url":"https://b.example/moon","title":"Moon","content":"The moon","engine":"bing","score":0.5}]}`))
		case "/res/v1/web/search":
			if r.Header.Get("X-Subscription-Token") != "k" {
				http.Error(w, "no", 401)
				return
			}
			_, _ = w.Write([]byte(`{"type":"search","web":{"results":[{"title":"<strong>Tides</strong>","url":"https://a.example/tides","description":"What <strong>tides</strong> are"}]}}`))
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	s, err := websearch.NewSearXNG(srv.URL, 0)
	if err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, "tides", 5)
	if err != nil || len(hits) != 2 || hits[1].URL != "https://b.example/moon" {
		t.Fatalf("searxng: %+v %v", hits, err)
	}
	b, _ := websearch.NewBrave(srv.URL, "k", 0)
	hits, err = b.Search(ctx, "tides", 5)
	if err != nil || len(hits) != 1 || hits[0].Title != "Tides" || hits[0].Snippet != "What tides are" {
		t.Fatalf("brave: %+v %v", hits, err)
	}
	bad, _ := websearch.NewBrave(srv.URL, "wrong", 0)
	if _, err := bad.Search(ctx, "tides", 5); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("brave 401: %v", err)
	}
	srv.Close()
	if _, err := s.Search(ctx, "tides", 5); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("down: %v", err)
	}
}
