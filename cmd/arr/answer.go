package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/arr-dev/arr/adapters/llm"
	"github.com/arr-dev/arr/adapters/localindex"
	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/adapters/websearch"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/readapi/answer"
	"github.com/arr-dev/arr/readapi/gateway"
	"github.com/arr-dev/arr/readapi/records"
)

// answerRole is the answer service's pipeline and its background work.
type answerRole struct {
	pipeline answer.Pipeline
	served   *answer.Served
	index    *localindex.Index // nil unless ARR_SEARCH=local
}

func (c *Config) searcher() (research.Searcher, *localindex.Index, error) {
	switch c.Answer.Search {
	case "searxng":
		s, err := websearch.NewSearXNG(c.Answer.SearXNGURL, 10*time.Second)
		return s, nil, err
	case "brave":
		b, err := websearch.NewBrave(c.Answer.BraveAPIBase, c.Answer.BraveAPIKey, 10*time.Second)
		return b, nil, err
	}
	x := localindex.New(c.indexDir())
	return x, x, nil
}

func (c *Config) fetcher() *webpage.Fetcher {
	return webpage.New(webpage.Config{AllowPrivate: c.Answer.FetchPrivate == "allow"})
}

func openAnswer(cfg Config, s *system, log *slog.Logger) (*answerRole, error) {
	search, index, err := cfg.searcher()
	if err != nil {
		return nil, err
	}
	model, err := llm.New(llm.Config{BaseURL: cfg.llmBaseURL(), APIKey: cfg.Answer.LLMAPIKey})
	if err != nil {
		return nil, fmt.Errorf("ARR_ANSWER_LLM_BASE_URL: %w", err)
	}
	r, err := research.New(research.Config{Search: search, Fetch: cfg.fetcher(), Model: model, ModelName: cfg.Answer.LLMModel, Logger: log})
	if err != nil {
		return nil, err
	}
	synth, err := commands.NewSynthesizeAnswerHandler(s.store, s.now, r)
	if err != nil {
		return nil, err
	}
	rec, err := commands.NewRecordAnswersServedHandler(s.store)
	if err != nil {
		return nil, err
	}
	served := answer.NewServed(rec, log)
	log.Info("answer service", "search", search.Name(), "llm", cfg.llmBaseURL(), "model", cfg.Answer.LLMModel)
	return &answerRole{
		pipeline: answer.Pipeline{Synthesize: synth, Cache: projections.NewAnswerCacheQueries(s.pool), Served: served},
		served:   served, index: index,
	}, nil
}

// seed fills a new local index with arr's own documentation (the three
// OpenAPI documents, one document per operation, and README.md when arr
// runs from its source tree), and the records service's data sources when
// that service answers. Each part is added once; a part that could not be
// read is tried again on the next start.
func (a *answerRole) seed(ctx context.Context, cfg Config, log *slog.Logger) {
	if a.index == nil || cfg.Answer.Seed != "on" {
		return
	}
	if done, _ := a.index.Seeded("docs"); !done {
		docs := openAPIDocs(cfg)
		docs = append(docs, readmeDocs(log)...)
		if err := a.index.AddSeed(ctx, "docs", docs...); err != nil {
			log.Warn("seeding the local search index with arr's documentation", "err", err)
		} else {
			log.Info("seeded the local search index with arr's documentation", "documents", len(docs), "dir", a.index.Dir())
		}
	}
	if done, _ := a.index.Seeded("records-data-sources"); done {
		return
	}
	base := cfg.serviceBase("records")
	f := webpage.New(webpage.Config{AllowPrivate: true, Timeout: 5 * time.Second})
	for attempt := 0; attempt < 10 && ctx.Err() == nil; attempt++ {
		for _, path := range []string{"/data-sources", "/api/v1/data-sources"} {
			d, ok := fetchDoc(ctx, f, "http://"+cfg.RecordsAddr+path, base+path)
			if !ok {
				continue
			}
			if err := a.index.AddSeed(ctx, "records-data-sources", d); err != nil {
				log.Warn("seeding the records data sources", "err", err)
			} else {
				log.Info("seeded the local search index with the records service's data sources", "url", d.URL)
			}
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	log.Info("the records service's data-sources page is not there yet; the local index will try again on the next start")
}

// fetchDoc reads one page (HTML, text or JSON) as an index document.
func fetchDoc(ctx context.Context, f *webpage.Fetcher, fetchURL, publicURL string) (localindex.Doc, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fetchURL, nil)
	if err != nil {
		return localindex.Doc{}, false
	}
	resp, err := http.DefaultClient.Do(req)
	if err == nil && resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		defer resp.Body.Close()
		var v any
		if json.NewDecoder(resp.Body).Decode(&v) == nil {
			return localindex.Doc{URL: publicURL, Title: "Records data sources", Content: flatten(v)}, true
		}
		return localindex.Doc{}, false
	}
	if err == nil {
		resp.Body.Close()
	}
	raw, err := f.Fetch(ctx, fetchURL)
	if err != nil {
		return localindex.Doc{}, false
	}
	p, err := webpage.Extract(raw)
	if err != nil {
		return localindex.Doc{}, false
	}
	return localindex.Doc{URL: publicURL, Title: p.Title, Content: p.Text}, true
}

// flatten writes JSON as "key: value" lines for full-text search.
func flatten(v any) string {
	var b strings.Builder
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(strings.TrimPrefix(prefix+" "+k, " "), t[k])
			}
		case []any:
			for _, e := range t {
				walk(prefix, e)
			}
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "%s: %v\n", strings.ReplaceAll(prefix, "_", " "), t)
		}
	}
	walk("", v)
	return b.String()
}

// openAPIDocs turns the three services' OpenAPI documents into one index
// document per operation, plus each document's description.
func openAPIDocs(cfg Config) []localindex.Doc {
	var out []localindex.Doc
	for _, svc := range []struct {
		name    string
		openapi func() ([]byte, error)
	}{{"answer", answer.OpenAPI}, {"gateway", gateway.OpenAPI}, {"records", records.OpenAPI}} {
		raw, err := svc.openapi()
		if err != nil {
			continue
		}
		var doc struct {
			Info struct {
				Title, Description string
			} `json:"info"`
			Paths map[string]map[string]json.RawMessage `json:"paths"`
		}
		if json.Unmarshal(raw, &doc) != nil {
			continue
		}
		base := cfg.serviceBase(svc.name) + "/openapi.json"
		out = append(out, localindex.Doc{URL: base, Title: doc.Info.Title, Content: doc.Info.Description})
		for path, ops := range doc.Paths {
			for method, op := range ops {
				var o struct {
					Summary, Description string
				}
				var all any
				if json.Unmarshal(op, &o) != nil || json.Unmarshal(op, &all) != nil || method == "parameters" {
					continue
				}
				ptr := "#/paths/" + strings.ReplaceAll(strings.ReplaceAll(path, "~", "~0"), "/", "~1") + "/" + method
				out = append(out, localindex.Doc{URL: base + ptr,
					Title:   fmt.Sprintf("%s %s (%s service): %s", strings.ToUpper(method), path, svc.name, o.Summary),
					Content: strings.TrimSpace(o.Summary + ".\n\n" + o.Description + "\n\n" + flatten(all))})
			}
		}
	}
	return out
}

// readmeDocs indexes ./README.md by section, when arr runs from its source
// tree.
func readmeDocs(log *slog.Logger) []localindex.Doc {
	abs, err := filepath.Abs("README.md")
	if err != nil {
		return nil
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		log.Debug("no README.md in the working directory to seed the local index with")
		return nil
	}
	return markdownDocs("file://"+abs, string(b))
}

// markdownDocs splits Markdown at its ## headings, one document a section.
func markdownDocs(url, text string) []localindex.Doc {
	var out []localindex.Doc
	title, anchor := "", ""
	var cur strings.Builder
	flush := func() {
		if strings.TrimSpace(cur.String()) != "" {
			u := url
			if anchor != "" {
				u += "#" + anchor
			}
			out = append(out, localindex.Doc{URL: u, Title: title, Content: cur.String()})
		}
		cur.Reset()
	}
	for _, line := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok || (strings.HasPrefix(line, "# ") && title == "") {
			flush()
			if !ok {
				h = strings.TrimPrefix(line, "# ")
			}
			title, anchor = strings.TrimSpace(h), slug(h)
		}
		cur.WriteString(line + "\n")
	}
	flush()
	return out
}

func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// start records served answers until meterCtx ends (after the HTTP drain)
// and seeds the local index in the background.
func (a *answerRole) start(runCtx, meterCtx context.Context, wg *sync.WaitGroup, cfg Config, log *slog.Logger) {
	wg.Add(2)
	go func() { defer wg.Done(); _ = a.served.Run(meterCtx) }()
	go func() { defer wg.Done(); a.seed(runCtx, cfg, log) }()
}
