package localindex_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/arr-dev/arr/adapters/localindex"
)

func TestAddSearchBM25(t *testing.T) {
	ctx := context.Background()
	x := localindex.New(filepath.Join(t.TempDir(), "idx"))
	if hits, err := x.Search(ctx, "anything", 5); err != nil || len(hits) != 0 {
		t.Fatalf("empty index: %v %v", hits, err)
	}
	docs := []localindex.Doc{
		{URL: "https://example.test/tide", Title: "Tides", Content: "Tides are caused by the gravity of the moon and the sun pulling on the oceans."},
		{URL: "https://example.test/bread", Title: "Bread", Content: "Bread rises because yeast ferments sugar into carbon dioxide."},
		{URL: "https://example.test/moon", Title: "The Moon", Content: "The moon orbits the earth every 27 days; its gravity raises tides."},
	}
	if err := x.Add(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	hits, err := x.Search(ctx, "why does bread rise with yeast", 2)
	if err != nil || len(hits) == 0 || hits[0].URL != "https://example.test/bread" || hits[0].Content == "" {
		t.Fatalf("hits %+v err %v", hits, err)
	}
	// Readers in parallel share the index.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := x.Search(ctx, "moon gravity tides", 3)
			if err != nil || len(h) < 2 {
				t.Errorf("parallel search: %v %v", h, err)
			}
		}()
	}
	wg.Wait()
	if n, _ := x.Count(); n != 3 {
		t.Fatalf("count %d", n)
	}
	if err := x.AddSeed(ctx, "docs", localindex.Doc{URL: "https://example.test/bread", Title: "Bread", Content: "Sourdough uses wild yeast."}); err != nil {
		t.Fatal(err)
	}
	if ok, err := x.Seeded("docs"); !ok || err != nil {
		t.Fatalf("seeded %v %v", ok, err)
	}
	if n, _ := x.Count(); n != 3 {
		t.Fatalf("re-adding a URL must replace it; count %d", n)
	}
}
