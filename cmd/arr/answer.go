package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/arr-dev/arr/adapters/llm"
	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/adapters/websearch"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/research"
	domainanswer "github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/readapi/answer"
	"github.com/arr-dev/arr/readapi/gateway"
	"github.com/arr-dev/arr/readapi/records"
)

// answerRole is the answer service's pipeline and its background work.
type answerRole struct {
	pipeline answer.Pipeline
	served   *answer.Served
	// index adds documents to the local index; nil unless ARR_SEARCH=local.
	index *commands.IndexDocumentHandler
	docs  *projections.AnswerDocQueries
	// local is the local search backend (nil for web search), kept fresh
	// in the background.
	local *research.Local
}

func (c *Config) searcher(docs *projections.AnswerDocQueries) (research.Searcher, error) {
	switch c.Answer.Search {
	case "searxng":
		return websearch.NewSearXNG(c.Answer.SearXNGURL, 10*time.Second)
	case "brave":
		return websearch.NewBrave(c.Answer.BraveAPIBase, c.Answer.BraveAPIKey, 10*time.Second)
	}
	return research.NewLocal(docs, research.DefaultWeights), nil
}

// answerModel is the language model answers are written with, or nil when
// none is configured (no ARR_ANSWER_LLM_API_KEY and no
// ARR_ANSWER_LLM_BASE_URL): then answers are extractive and no model is
// called.
func (c *Config) answerModel() (research.Model, error) {
	if c.Answer.LLMAPIKey == "" && c.Answer.LLMBaseURL == "" {
		return nil, nil
	}
	m, err := llm.New(llm.Config{BaseURL: c.llmBaseURL(), APIKey: c.Answer.LLMAPIKey})
	if err != nil {
		return nil, fmt.Errorf("ARR_ANSWER_LLM_BASE_URL: %w", err)
	}
	return m, nil
}

func (c *Config) fetcher() *webpage.Fetcher {
	return webpage.New(webpage.Config{AllowPrivate: c.Answer.FetchPrivate == "allow"})
}

// robotsAgent is the name `arr answer index add` goes by in robots.txt.
const robotsAgent = "arr"

// indexFetcher is the fetcher of `arr answer index add`: the answer
// service's bounds and address guard, user agent arr.
func (c *Config) indexFetcher() *webpage.Fetcher {
	return webpage.New(webpage.Config{AllowPrivate: c.Answer.FetchPrivate == "allow", UserAgent: robotsAgent + "/1 (+https://github.com/arr-dev/arr)"})
}

func openAnswer(cfg Config, s *system, log *slog.Logger) (*answerRole, error) {
	docs := projections.NewAnswerDocQueries(s.pool)
	search, err := cfg.searcher(docs)
	if err != nil {
		return nil, err
	}
	model, err := cfg.answerModel()
	if err != nil {
		return nil, err
	}
	r, err := research.New(research.Config{Search: search, Fetch: cfg.fetcher(), Model: model, ModelName: cfg.Answer.LLMModel,
		DocsBaseURL: cfg.serviceBase("answer"), Logger: log})
	if err != nil {
		return nil, err
	}
	local, _ := search.(*research.Local)
	var index *commands.IndexDocumentHandler
	if cfg.Answer.Search == "local" {
		if index, err = commands.NewIndexDocumentHandler(s.store, s.now); err != nil {
			return nil, err
		}
	}
	synthesis := "extractive"
	if model != nil {
		synthesis = "llm, extractive when the model does not answer"
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
	if model != nil {
		log.Info("answer service", "search", search.Name(), "synthesis", "llm", "llm", cfg.llmBaseURL(), "model", cfg.Answer.LLMModel)
	} else {
		log.Info("answer service", "search", search.Name(), "synthesis", "extractive (no language model configured: set ARR_ANSWER_LLM_API_KEY)")
	}
	return &answerRole{
		pipeline: answer.Pipeline{Synthesize: synth, Cache: projections.NewAnswerCacheQueries(s.pool), Served: served,
			Generation: r.Generation, Synthesis: synthesis, Docs: docs},
		served: served, index: index, docs: docs, local: local,
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
	if n, err := a.docs.Count(ctx); err != nil || n > 0 {
		return // seeded before, or documents were added: leave the index to its owner
	}
	docs := openAPIDocs(cfg)
	docs = append(docs, readmeDocs(log)...)
	added := 0
	for _, d := range docs {
		if _, err := a.index.Handle(ctx, d); err != nil {
			log.Warn("seeding the local search index with arr's documentation", "origin", d.Origin, "err", err)
			continue
		}
		added++
	}
	log.Info("seeded the local search index with arr's documentation", "documents", added)
	base := cfg.serviceBase("records")
	f := webpage.New(webpage.Config{AllowPrivate: true, Timeout: 5 * time.Second})
	for attempt := 0; attempt < 10 && ctx.Err() == nil; attempt++ {
		for _, path := range []string{"/data-sources", "/api/v1/data-sources"} {
			d, ok := fetchDoc(ctx, f, "http://"+cfg.RecordsAddr+path, base+path)
			if !ok {
				continue
			}
			if _, err := a.index.Handle(ctx, d); err != nil {
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
func fetchDoc(ctx context.Context, f *webpage.Fetcher, fetchURL, publicURL string) (commands.IndexDocument, bool) {
	raw, err := f.Fetch(ctx, fetchURL)
	if err != nil {
		return commands.IndexDocument{}, false
	}
	if strings.HasPrefix(raw.ContentType, "application/json") {
		var v any
		if json.Unmarshal(raw.Body, &v) != nil {
			return commands.IndexDocument{}, false
		}
		return textDoc(publicURL, "", "Records data sources", flatten(v)), true
	}
	p, err := webpage.Extract(raw)
	if err != nil {
		return commands.IndexDocument{}, false
	}
	return pageDoc(publicURL, "", p), true
}

// pageDoc is the IndexDocument of an extracted page read from url (or,
// url empty, from the local file origin).
func pageDoc(url, origin string, p webpage.Page) commands.IndexDocument {
	if origin == "" {
		origin = url
	}
	return commands.IndexDocument{URL: url, Origin: origin, Title: p.Title, Sections: research.Sections(p),
		Metadata: eventstore.Metadata{Actor: "arr:answer-index"}}
}

// textDoc is the IndexDocument of plain text: its paragraphs as prose.
func textDoc(url, origin, title, text string) commands.IndexDocument {
	var blocks []domainanswer.Block
	for _, para := range strings.Split(text, "\n\n") {
		if para = strings.TrimSpace(para); para != "" {
			blocks = append(blocks, domainanswer.Block{Kind: domainanswer.Prose, Text: para})
		}
	}
	if origin == "" {
		origin = url
	}
	return commands.IndexDocument{URL: url, Origin: origin, Title: title, Sections: []domainanswer.Section{{Blocks: blocks}},
		Metadata: eventstore.Metadata{Actor: "arr:answer-index"}}
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
func openAPIDocs(cfg Config) []commands.IndexDocument {
	var out []commands.IndexDocument
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
		out = append(out, textDoc(base, "", doc.Info.Title, doc.Info.Description))
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
				out = append(out, textDoc(base+ptr, "", fmt.Sprintf("%s %s (%s service): %s", strings.ToUpper(method), path, svc.name, o.Summary),
					strings.TrimSpace(o.Summary+".\n\n"+o.Description)))
			}
		}
	}
	return out
}

// readmeDocs indexes ./README.md by section, when arr runs from its source
// tree.
func readmeDocs(log *slog.Logger) []commands.IndexDocument {
	abs, err := filepath.Abs("README.md")
	if err != nil {
		return nil
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		log.Debug("no README.md in the working directory to seed the local index with")
		return nil
	}
	p, err := webpage.Extract(webpage.Raw{URL: "file://" + abs, ContentType: "text/markdown", Body: b})
	if err != nil {
		return nil
	}
	return []commands.IndexDocument{pageDoc("", abs, p)}
}

// start records served answers until meterCtx ends (after the HTTP drain)
// and seeds the local index in the background.
func (a *answerRole) start(runCtx, meterCtx context.Context, wg *sync.WaitGroup, cfg Config, log *slog.Logger) {
	wg.Add(2)
	go func() { defer wg.Done(); _ = a.served.Run(meterCtx) }()
	go func() { defer wg.Done(); a.seed(runCtx, cfg, log) }()
	if a.local != nil {
		wg.Add(1)
		go func() { defer wg.Done(); a.local.Run(runCtx, log.Warn) }()
	}
}
