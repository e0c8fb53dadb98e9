package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/arr-dev/arr/adapters/demodata"
	"github.com/arr-dev/arr/adapters/llm"
	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/adapters/websearch"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/docseed"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/readapi/answer"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/gateway"
	"github.com/arr-dev/arr/readapi/records"
)

// answerRole is the answer service's pipeline and its background work.
type answerRole struct {
	pipeline answer.Pipeline
	served   *answer.Served
	// index adds documents to the local index; nil unless ARR_SEARCH=local.
	index *commands.IndexDocumentHandler
	docs  app.AnswerDocs
	// local is the local search backend (nil for web search), kept fresh
	// in the background.
	local *research.Local
	// dataSources is the records data-source report the seeding indexes
	// (the query GET /api/v1/data-sources answers from).
	dataSources func(context.Context) (any, error)
}

func (c *Config) searcher(docs app.AnswerDocs) (research.Searcher, error) {
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
	docs := s.app.Queries.AnswerDocs
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
	gaz, err := demodata.LoadGazetteer()
	if err != nil {
		return nil, err
	}
	return &answerRole{
		pipeline: answer.Pipeline{Synthesize: synth, Cache: s.app.Queries.AnswerCache, Served: served,
			Generation: r.Generation, Synthesis: synthesis, Docs: docs},
		served: served, index: index, docs: docs, local: local,
		dataSources: func(ctx context.Context) (any, error) { return s.app.Queries.Parcels.DataSources(ctx, gaz, s.now()) },
	}, nil
}

// seed fills a new local index with arr's own documentation (docseed),
// unless ARR_ANSWER_SEED=off or the search is not local.
func (a *answerRole) seed(ctx context.Context, cfg Config, log *slog.Logger) {
	if a.index == nil || cfg.Answer.Seed != "on" {
		return
	}
	docseed.Seeder{Index: a.index, Count: a.docs.Count, Log: log, DataSources: a.dataSources, RecordsBase: cfg.serviceBase("records"),
		Specs: []docseed.Spec{{Service: "answer", Base: cfg.serviceBase("answer"), OpenAPI: answer.OpenAPI},
			{Service: "gateway", Base: cfg.serviceBase("gateway"), OpenAPI: gateway.OpenAPI},
			{Service: "records", Base: cfg.serviceBase("records"), OpenAPI: records.OpenAPI}}}.Seed(ctx)
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
