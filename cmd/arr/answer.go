package main

import (
	"context"
	"fmt"
	"github.com/arr-dev/arr/docs"
	"io"
	"os"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/arr-dev/arr/adapters/llm"
	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/adapters/websearch"
	"github.com/arr-dev/arr/commands/docseed"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/projections/answerdocs"
	"github.com/arr-dev/arr/readapi/answerapi"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/gateway"
	"github.com/arr-dev/arr/readapi/recordsapi"
)

func (c *Config) searcher(docs app.AnswerDocs) (research.Searcher, error) {
	switch c.Answer.Search {
	case "searxng":
		return websearch.NewSearXNG(c.Answer.SearXNGURL, 10*time.Second)
	case "brave":
		return websearch.NewBrave(c.Answer.BraveAPIBase, c.Answer.BraveAPIKey, 10*time.Second)
	}
	return research.NewStored(docs, research.DefaultWeights), nil
}

// answerModel is the language model answers are written with, or nil when
// none is configured (no ARR_ANSWER_LLM_API_KEY and no
// ARR_ANSWER_LLM_BASE_URL): then answers are extractive and no model is
// called.
func (c *Config) answerModel(tracer trace.Tracer) (research.Model, error) {
	if c.Answer.LLMAPIKey == "" && c.Answer.LLMBaseURL == "" {
		return nil, nil
	}
	m, err := llm.New(llm.Config{BaseURL: c.llmBaseURL(), APIKey: c.Answer.LLMAPIKey, Tracer: tracer})
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

// openResearch builds the answer service's research pipeline: the search
// backend (the local index, SearXNG or Brave), the page fetcher and the
// language model, if one is configured. The local index's refresh is kept
// for the lifecycle.
func (s *system) openResearch() (*research.Researcher, error) {
	cfg, log := s.cfg, s.log
	search, err := cfg.searcher(s.answerDocs())
	if err != nil {
		return nil, err
	}
	model, err := cfg.answerModel(s.traces.Tracer())
	if err != nil {
		return nil, err
	}
	var features io.Writer
	if name := cfg.Answer.FeaturesFile; name != "" {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("opening ARR_ANSWER_FEATURES_FILE: %w", err)
		}
		s.closers = append(s.closers, func() { _ = f.Close() })
		features = f
	}
	r, err := research.New(research.Config{Search: search, Fetch: cfg.fetcher(), Model: model, ModelName: cfg.Answer.LLMModel,
		DocsBaseURL: cfg.serviceBase("answer"), Logger: log, Features: features})
	if err != nil {
		return nil, err
	}
	s.answerModel = model
	if model != nil {
		log.Info("answer service", "search", search.Name(), "synthesis", "llm", "llm", cfg.llmBaseURL(), "model", cfg.Answer.LLMModel)
	} else {
		log.Info("answer service", "search", search.Name(), "synthesis", "extractive (no language model configured: set ARR_ANSWER_LLM_API_KEY)")
	}
	return r, nil
}

// answerDocs is the local index's read model.
func (s *system) answerDocs() app.AnswerDocs { return answerdocs.NewQueries(s.pool) }

// seedDocs fills a new local index with arr's own documentation (docseed),
// unless ARR_ANSWER_SEED=off or the search is not local.
func (s *system) seedDocs(ctx context.Context) {
	if s.cfg.Answer.Search != "local" || s.cfg.Answer.Seed != "on" {
		return
	}
	a, cfg := s.app, s.cfg
	docseed.Seeder{Index: a.Commands.IndexDocument, Count: a.Queries.AnswerDocs.Count, Log: s.log, RecordsBase: cfg.serviceBase("records"),
		Reference: docs.Pages(),
		DataSources: func(ctx context.Context) (any, error) {
			return a.Queries.Parcels.DataSources(ctx, a.Queries.Gazetteer, s.now())
		},
		Specs: []docseed.Spec{{Service: "answer", Base: cfg.serviceBase("answer"), OpenAPI: answerapi.OpenAPI},
			{Service: "gateway", Base: cfg.serviceBase("gateway"), OpenAPI: gateway.OpenAPI},
			{Service: "records", Base: cfg.serviceBase("records"), OpenAPI: recordsapi.OpenAPI}}}.Seed(ctx)
}
