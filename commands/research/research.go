package research

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/arr-dev/arr/adapters/llm"
	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/adapters/websearch"
	"github.com/arr-dev/arr/domain/answer"
)

// Searcher is a web search backend.
type Searcher interface {
	Name() string
	Search(ctx context.Context, q string, n int) ([]websearch.Hit, error)
}

// Fetcher gets pages.
type Fetcher interface {
	Fetch(ctx context.Context, url string) (webpage.Raw, error)
}

// Model writes text from a chat.
type Model interface {
	Complete(ctx context.Context, r llm.Request) (llm.Response, error)
}

// Config configures a Researcher.
type Config struct {
	Search Searcher
	Fetch  Fetcher
	// Model writes answers; nil makes every answer extractive.
	Model Model
	// ModelName is sent as the completion's model. Default "auto" (arr's
	// gateway picks the tier).
	ModelName string
	// ProQualityFloor is sent as quality_floor for tier=pro when ModelName
	// is "auto". Default 0.9.
	ProQualityFloor float64
	// Sources read per answer (quick mode). Defaults 5 and 8.
	FreeSources, ProSources int
	// Deep mode: most searches (the question included), sources read, the
	// time after which no further search starts, and the total bound.
	// Defaults 4, 10 (pro 14), 60s, 120s.
	DeepMaxSearches                 int
	DeepFreeSources, DeepProSources int
	DeepSearchBudget, DeepTimeout   time.Duration
	// QuickTimeout bounds a quick answer. Default 45s.
	QuickTimeout time.Duration
	// FetchConcurrency is how many pages are fetched at once. Default 6.
	FetchConcurrency int
	// DocsBaseURL is the answer service's absolute base URL: local files
	// of the index are cited at DocsBaseURL/docs/{doc_id}.
	DocsBaseURL string
	Logger      *slog.Logger
	// Features, when set, receives every extractive answer's candidate
	// sentences with their feature values, one JSON line an answer: the
	// input from which the evaluation fits the features' weights. Nil in
	// service.
	Features io.Writer
}

func (c *Config) defaults() error {
	if c.Search == nil || c.Fetch == nil {
		return errors.New("research: a search backend and a fetcher are required")
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defd := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.ModelName == "" {
		c.ModelName = "auto"
	}
	if c.ProQualityFloor <= 0 {
		c.ProQualityFloor = 0.9
	}
	def(&c.FreeSources, 5)
	def(&c.ProSources, 8)
	def(&c.DeepMaxSearches, 4)
	def(&c.DeepFreeSources, 10)
	def(&c.DeepProSources, 14)
	def(&c.FetchConcurrency, 6)
	defd(&c.DeepSearchBudget, 60*time.Second)
	defd(&c.DeepTimeout, 120*time.Second)
	defd(&c.QuickTimeout, 45*time.Second)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Researcher answers questions.
type Researcher struct {
	cfg      Config
	features *featureLog
}

// New returns a Researcher.
func New(cfg Config) (*Researcher, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	r := &Researcher{cfg: cfg}
	if cfg.Features != nil {
		r.features = &featureLog{w: cfg.Features}
	}
	return r, nil
}

// Backend names the search backend.
func (r *Researcher) Backend() string { return r.cfg.Search.Name() }

// Result is a researched answer.
type Result struct {
	Answer    string
	Sources   []answer.Source
	Synthesis answer.Synthesis
	// Found: a passage answers the question (answer.AnswerSynthesized's
	// AnswerFound); false when the answer says the sources do not.
	Found        bool
	Model        string
	SubQuestions []string
	Costs        answer.Costs
	// Retrieval is how the answer was found (for AnswerSynthesized).
	Retrieval answer.Retrieval

	// ranked are the passages a passage searcher returned (local index);
	// nil: rank the documents read.
	ranked     []Scored
	index      *Index // the ranked passages came from
	generation uint64
	chosen     []Chosen
}

// document is one source as read.
type document struct {
	title, url, text string
	// sections, when set, are the page's structure (else text is cut into
	// paragraphs).
	sections []answer.Section
	// foundBy counts the searches that returned it.
	foundBy int
	// published is the page's date, "YYYY-MM-DD", or "".
	published string
}

// Answer researches req. A search backend that fails makes the whole
// answer fail with an error wrapping domain.ErrUnavailable; pages that
// cannot be read are replaced by their search snippet or skipped; a
// language model that fails makes the answer extractive.
func (r *Researcher) Answer(ctx context.Context, req answer.Request) (Result, error) {
	start := time.Now()
	// Research runs for the self-contained question.
	req.Query = req.Question()
	var res Result
	var docs []document
	var err error
	bound := r.cfg.QuickTimeout
	if req.Mode == answer.Deep {
		bound = r.cfg.DeepTimeout
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	switch ps, local := r.cfg.Search.(PassageSearcher); {
	case local:
		err = r.localGather(ctx, ps, req, &res)
	case req.Mode == answer.Deep:
		docs, err = r.deepGather(ctx, req, &res)
	default:
		docs, err = r.quickGather(ctx, req, &res.Costs)
	}
	if err != nil {
		return Result{}, err
	}
	if req.Format.Structured() {
		if err := r.writeStructured(ctx, req, docs, &res); err != nil {
			return Result{}, err
		}
	} else {
		r.write(ctx, req, docs, &res)
	}
	if err := parent.Err(); err != nil {
		// The caller gave up (every asker hung up): what was written
		// under a cancelled context (an extractive fallback for a model
		// call it cut) is not the answer.
		return Result{}, fmt.Errorf("researching: %w", context.Cause(parent))
	}
	res.Costs.TotalUS = time.Since(start).Microseconds()
	return res, nil
}

func (r *Researcher) sources(req answer.Request) int {
	return req.ContextSize.Sources(r.tierSources(req))
}

// tierSources is how many sources the request's tier and mode read.
func (r *Researcher) tierSources(req answer.Request) int {
	switch {
	case req.Mode == answer.Deep && req.Tier == answer.Pro:
		return r.cfg.DeepProSources
	case req.Mode == answer.Deep:
		return r.cfg.DeepFreeSources
	case req.Tier == answer.Pro:
		return r.cfg.ProSources
	}
	return r.cfg.FreeSources
}

// Generation is the local index's generation answers are made from now (0
// for web search): part of an answer's cache key.
func (r *Researcher) Generation(ctx context.Context) (uint64, error) {
	if ps, ok := r.cfg.Search.(PassageSearcher); ok {
		return ps.Generation(ctx)
	}
	return 0, nil
}

// localPassages is how many ranked passages of the local index an answer
// considers.
const localPassages = 60

// localGather ranks the local index's passages for the question (in deep
// mode, for the question and its sub-questions together); nothing is
// fetched.
func (r *Researcher) localGather(ctx context.Context, ps PassageSearcher, req answer.Request, res *Result) error {
	t := time.Now()
	q := req.Query
	if req.Mode == answer.Deep {
		res.SubQuestions = r.plan(ctx, req, res)
		q = strings.Join(append([]string{req.Query}, res.SubQuestions...), " ")
	}
	n := localPassages
	if req.Filters.Any() {
		n = math.MaxInt32 // every match, filtered below
	}
	ranked, idx, err := ps.SearchPassages(ctx, q, n)
	res.Costs.Searches++
	res.Costs.SearchUS = time.Since(t).Microseconds()
	if err != nil {
		return fmt.Errorf("searching: %w", err)
	}
	if req.Filters.Any() {
		kept := ranked[:0]
		for _, p := range ranked {
			if len(kept) < localPassages && req.Filters.Allows(HostOf(p.URL), p.Published) {
				kept = append(kept, p)
			}
		}
		ranked = kept
	}
	res.ranked, res.index, res.generation = ranked, idx, idx.Generation
	if res.ranked == nil {
		res.ranked = []Scored{}
	}
	return nil
}

func (r *Researcher) quickGather(ctx context.Context, req answer.Request, costs *answer.Costs) ([]document, error) {
	t := time.Now()
	n := r.sources(req)
	hits, err := r.cfg.Search.Search(ctx, searchQuery(req.Query, req.Filters), n)
	costs.Searches++
	costs.SearchUS = time.Since(t).Microseconds()
	if err != nil {
		return nil, fmt.Errorf("searching: %w", err)
	}
	return keepDated(r.read(ctx, allowedHits(hits, req.Filters), map[string]int{}, costs), req.Filters), nil
}

// searchQuery is q with the domain filters as search operators the web
// search backends understand (SearXNG passes them to its engines; Brave
// documents site:, OR and -site:): "site:a OR site:b" for the included
// names, "-site:c" for each excluded one. The results are filtered again
// whatever the engine made of them (allowedHits).
func searchQuery(q string, f answer.Filters) string {
	var terms []string
	for i, d := range f.IncludeDomains {
		if i > 0 {
			terms = append(terms, "OR")
		}
		terms = append(terms, "site:"+d)
	}
	for _, d := range f.ExcludeDomains {
		terms = append(terms, "-site:"+d)
	}
	if len(terms) == 0 {
		return q
	}
	return q + " " + strings.Join(terms, " ")
}

// allowedHits are the hits on hosts the domain filters allow.
func allowedHits(hits []websearch.Hit, f answer.Filters) []websearch.Hit {
	out := hits[:0:0]
	for _, h := range hits {
		if f.AllowsHost(HostOf(h.URL)) {
			out = append(out, h)
		}
	}
	return out
}

// keepDated are the documents inside the filters' window of dates (all of
// them when there is none; an undated one is left out when there is).
func keepDated(docs []document, f answer.Filters) []document {
	if !f.Dated() {
		return docs
	}
	out := docs[:0]
	for _, d := range docs {
		if f.AllowsDate(d.published) {
			out = append(out, d)
		}
	}
	return out
}
