package research

import (
	"context"
	"regexp"
	"sync"
	"time"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/adapters/websearch"
	"github.com/arr-dev/arr/domain/answer"
)

// read turns hits into documents: local hits as they are, web hits fetched
// concurrently and extracted, their snippet standing in when the page
// cannot be read. foundBy says how many searches returned each URL (0 is
// read as 1).
func (r *Researcher) read(ctx context.Context, hits []websearch.Hit, foundBy map[string]int, costs *answer.Costs) []document {
	docs := make([]document, len(hits))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, r.cfg.FetchConcurrency)
	var fetchMax, extractSum time.Duration
	for i, h := range hits {
		docs[i] = document{title: h.Title, url: h.URL, text: h.Content, foundBy: max(foundBy[h.URL], 1)}
		if h.Content != "" {
			continue
		}
		wg.Add(1)
		go func(i int, h websearch.Hit) {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				docs[i].text = h.Snippet
				return
			}
			defer func() { <-sem }()
			t := time.Now()
			raw, err := r.cfg.Fetch.Fetch(ctx, h.URL)
			took := time.Since(t)
			var page webpage.Page
			var ex time.Duration
			if err == nil {
				t = time.Now()
				page, err = webpage.Extract(raw)
				ex = time.Since(t)
			}
			mu.Lock()
			defer mu.Unlock()
			fetchMax = max(fetchMax, took)
			extractSum += ex
			if err != nil {
				r.cfg.Logger.Debug("page not read; using its snippet", "url", h.URL, "err", err)
				docs[i].text = h.Snippet
				return
			}
			costs.PagesFetched++
			docs[i].text = page.Text
			docs[i].sections = Sections(page)
			docs[i].published = page.Published
			if docs[i].title == "" {
				docs[i].title = page.Title
			}
		}(i, h)
	}
	wg.Wait()
	costs.FetchUS += fetchMax.Microseconds()
	costs.ExtractUS += extractSum.Microseconds()
	out := docs[:0]
	for _, d := range docs {
		d.text = footnotes.ReplaceAllString(d.text, "")
		if d.text != "" {
			if d.title == "" {
				d.title = d.url
			}
			out = append(out, d)
		}
	}
	return out
}

// footnotes are bracketed numbers in page text (Wikipedia's [12]); they are
// dropped so that they cannot pass for citations of ours.
var footnotes = regexp.MustCompile(`\[\s*\d{1,3}(?:\s*,\s*\d{1,3})*\s*\]`)
