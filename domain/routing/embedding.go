package routing

import (
	"fmt"
	"strings"

	"github.com/arr-dev/arr/domain"
)

// EmbeddingModel is one upstream embedding model: a model kind of its
// own, priced per input token only (OutputPerM is 0), whose ContextWindow
// is the longest input it embeds, in tokens.
type EmbeddingModel struct {
	Model
	// Dimensions is the length of the model's vectors.
	Dimensions int
	// MinDimensions is the shortest vector the model returns when asked
	// for fewer dimensions (OpenAI's `dimensions`); 0: the length cannot be
	// chosen.
	MinDimensions int
}

// Embeds reports whether the model returns vectors of dims dimensions (0:
// its own length).
func (m EmbeddingModel) Embeds(dims int) bool {
	return dims == 0 || dims == m.Dimensions || (m.MinDimensions > 0 && dims >= m.MinDimensions && dims <= m.Dimensions)
}

// dimensionRange says which lengths the model returns, for messages.
func (m EmbeddingModel) dimensionRange() string {
	if m.MinDimensions == 0 || m.MinDimensions == m.Dimensions {
		return fmt.Sprintf("%s: %d", m.ID, m.Dimensions)
	}
	return fmt.Sprintf("%s: %d to %d", m.ID, m.MinDimensions, m.Dimensions)
}

// EmbeddingTier is a rung of the embedding models' price ladder, its
// models in failover order.
type EmbeddingTier struct {
	Name   string
	Models []EmbeddingModel
}

// embeddingTierNames are the names an embedding tier may have, cheapest
// first; they differ from the chat tiers', so a name says which kind it is.
var embeddingTierNames = []string{"embed-small", "embed-large"}

// EmbeddingTierNames returns the names an embedding tier may have,
// cheapest first.
func EmbeddingTierNames() []string { return append([]string(nil), embeddingTierNames...) }

func isEmbeddingTier(s string) bool {
	for _, t := range embeddingTierNames {
		if t == s {
			return true
		}
	}
	return false
}

type fileEmbeddingModel struct {
	ID             string   `json:"id"`
	Vendor         string   `json:"vendor"`
	UpstreamModel  string   `json:"upstream_model"`
	BaseURL        string   `json:"base_url"`
	APIKeyEnv      string   `json:"api_key_env"`
	InputPer1K     *float64 `json:"input_usd_per_1k"`
	Dimensions     int      `json:"dimensions"`
	MinDimensions  int      `json:"min_dimensions"`
	MaxInputTokens int64    `json:"max_input_tokens"`
}

type fileEmbeddingTier struct {
	Name   string               `json:"name"`
	Models []fileEmbeddingModel `json:"models"`
}

// parseEmbeddingTiers adds the catalog file's embedding_tiers: embed-small
// and embed-large, each at most once, cheapest first; model ids unique in
// the whole catalog.
func (c *Catalog) parseEmbeddingTiers(tiers []fileEmbeddingTier) error {
	next := 0
	for _, ft := range tiers {
		idx := -1
		for i := next; i < len(embeddingTierNames); i++ {
			if embeddingTierNames[i] == ft.Name {
				idx = i
			}
		}
		if idx < 0 {
			return fmt.Errorf("catalog: embedding tier %q: embedding tiers are %s, each at most once, cheapest first", ft.Name, strings.Join(embeddingTierNames, ", "))
		}
		next = idx + 1
		if len(ft.Models) == 0 {
			return fmt.Errorf("catalog: embedding tier %s has no models", ft.Name)
		}
		t := EmbeddingTier{Name: ft.Name}
		for _, fm := range ft.Models {
			m, err := fm.model(ft.Name)
			if err != nil {
				return err
			}
			if c.known(m.ID) {
				return fmt.Errorf("catalog: model id %q appears twice", m.ID)
			}
			c.byEmbedding[m.ID] = m
			t.Models = append(t.Models, m)
		}
		c.byEmbeddingTier[t.Name] = len(c.EmbeddingTiers)
		c.EmbeddingTiers = append(c.EmbeddingTiers, t)
	}
	return nil
}

// known reports whether id is a model id of the catalog, of either kind.
func (c *Catalog) known(id string) bool {
	_, chat := c.byModel[id]
	_, emb := c.byEmbedding[id]
	return chat || emb
}

func (fm fileEmbeddingModel) model(tier string) (EmbeddingModel, error) {
	bad := func(format string, args ...any) (EmbeddingModel, error) {
		return EmbeddingModel{}, fmt.Errorf("catalog: embedding tier %s, model %q: %s", tier, fm.ID, fmt.Sprintf(format, args...))
	}
	switch {
	case fm.ID == "" || fm.ID == "auto" || isTier(fm.ID) || isEmbeddingTier(fm.ID):
		return bad("id must be set and may not be \"auto\" or a tier name")
	case fm.Vendor == "" || strings.ContainsAny(fm.Vendor, " /"):
		return bad("vendor must be a single word")
	case fm.BaseURL == "" || !(strings.HasPrefix(fm.BaseURL, "http://") || strings.HasPrefix(fm.BaseURL, "https://")):
		return bad("base_url must be an http(s) URL")
	case fm.InputPer1K == nil || *fm.InputPer1K < 0:
		return bad("input_usd_per_1k is required and may not be negative")
	case fm.Dimensions < 1 || fm.Dimensions > 65536:
		return bad("dimensions must be from 1 to 65536")
	case fm.MinDimensions < 0 || fm.MinDimensions > fm.Dimensions:
		return bad("min_dimensions must be from 1 to dimensions, or left out when the length cannot be chosen")
	case fm.MaxInputTokens < 1:
		return bad("max_input_tokens must be at least 1")
	}
	up := fm.UpstreamModel
	if up == "" {
		up = fm.ID
	}
	in := perM(*fm.InputPer1K)
	return EmbeddingModel{Model: Model{
		ID: fm.ID, Vendor: fm.Vendor, UpstreamModel: up, BaseURL: strings.TrimRight(fm.BaseURL, "/"), APIKeyEnv: fm.APIKeyEnv,
		InputPerM: in, CachedInputPerM: in, CacheWritePerM: in, ContextWindow: fm.MaxInputTokens, Tier: tier,
	}, Dimensions: fm.Dimensions, MinDimensions: fm.MinDimensions}, nil
}

// EmbeddingModel returns an embedding model by id.
func (c *Catalog) EmbeddingModel(id string) (EmbeddingModel, bool) {
	m, ok := c.byEmbedding[id]
	return m, ok
}

// EmbeddingModels returns every embedding model, tier by tier.
func (c *Catalog) EmbeddingModels() []EmbeddingModel {
	var out []EmbeddingModel
	for _, t := range c.EmbeddingTiers {
		out = append(out, t.Models...)
	}
	return out
}

// EmbeddingRequest is what the embedding router decides on.
type EmbeddingRequest struct {
	// Model is "auto" (or empty), an embedding tier's name or an embedding
	// model's id.
	Model string
	// Dimensions is the vector length asked for; 0: the model's own.
	Dimensions int
	// InputTokens is the whole request's size in tokens, at most (what a
	// key's budget reserves).
	InputTokens int64
	// LongestInput is the token count of the longest input whose count is
	// known exactly (inputs sent as token arrays); 0: none.
	LongestInput int64
	// Allow says whether the caller's key may use a model id of a tier;
	// nil allows every model. Auto and failover choose among the allowed
	// only; a tier or model named that allows none is ErrForbidden.
	Allow func(id, tier string) bool
}

// allowed keeps the models r may use.
func (r EmbeddingRequest) allowed(ms []EmbeddingModel) []EmbeddingModel {
	if r.Allow == nil {
		return ms
	}
	var out []EmbeddingModel
	for _, m := range ms {
		if r.Allow(m.ID, m.Tier) {
			out = append(out, m)
		}
	}
	return out
}

// errEmbeddingNotAllowed refuses an embedding tier or model the caller's
// key may not use.
func errEmbeddingNotAllowed(name string) error {
	return &domain.Error{Kind: domain.ErrForbidden, Code: "model_not_allowed", Field: "model",
		Message: fmt.Sprintf("this API key may not use %q (its models limit says which tiers and models it may); use one of them or model auto", name)}
}

// EmbeddingCandidate is one upstream to try, with the request's estimated
// cost there.
type EmbeddingCandidate struct {
	Model   EmbeddingModel
	EstCost MicroUSD
}

// EmbeddingDecision is the router's choice: the tier and its models that
// can answer, in failover order.
type EmbeddingDecision struct {
	Tier       string
	Candidates []EmbeddingCandidate
}

// RouteEmbedding decides an embedding request. "auto" takes the cheapest
// embedding tier with a model that returns the dimensions asked for and
// takes the longest input; a tier its models that do, in catalog order; a
// model id that model alone (vectors of two models are not comparable, so
// a named model never fails over to another). A request never fails over
// to another tier.
//
// Errors: ErrNotFound (model_not_found) for a name the catalog does not
// have, or a catalog without embedding models; ErrForbidden
// (model_not_allowed) for a tier or model r.Allow refuses wholly, or auto
// when it allows no embedding model; ErrInvalid for a chat model
// or tier (not_an_embedding_model), dimensions no candidate returns
// (dimensions_not_supported) and an input longer than every candidate
// takes (context_length_exceeded).
func RouteEmbedding(c *Catalog, r EmbeddingRequest) (EmbeddingDecision, error) {
	if r.Dimensions < 0 {
		return EmbeddingDecision{}, domain.Invalid("invalid_value", "dimensions", "dimensions must be a positive integer")
	}
	if len(c.EmbeddingTiers) == 0 {
		return EmbeddingDecision{}, &domain.Error{Kind: domain.ErrNotFound, Code: "model_not_found", Field: "model",
			Message: "this gateway's catalog has no embedding models (embedding_tiers in the ARR_CATALOG file)"}
	}
	name := r.Model
	if name == "" {
		name = "auto"
	}
	var tier string
	var models []EmbeddingModel
	if m, ok := c.byEmbedding[name]; ok {
		tier, models = m.Tier, []EmbeddingModel{m}
	} else if i, ok := c.byEmbeddingTier[name]; ok {
		tier, models = name, c.EmbeddingTiers[i].Models
	} else if name != "auto" {
		return EmbeddingDecision{}, c.notAnEmbeddingModel(name)
	}
	if name != "auto" {
		if models = r.allowed(models); len(models) == 0 {
			return EmbeddingDecision{}, errEmbeddingNotAllowed(name)
		}
		return c.embeddingChoice(tier, models, r)
	}
	for _, t := range c.EmbeddingTiers {
		if ms := r.allowed(t.Models); len(ms) > 0 {
			if d, err := c.embeddingChoice(t.Name, ms, r); err == nil {
				return d, nil
			}
		}
	}
	all := r.allowed(c.EmbeddingModels())
	if len(all) == 0 {
		return EmbeddingDecision{}, errEmbeddingNotAllowed("auto")
	}
	return c.embeddingChoice("auto", all, r)
}

// TierOf returns the tier of a model id of either kind ("" for an id the
// catalog does not have), so that a key's models limit naming a tier
// covers its models.
func (c *Catalog) TierOf(id string) string {
	if m, ok := c.byModel[id]; ok {
		return m.Tier
	}
	return c.byEmbedding[id].Tier
}

// embeddingChoice keeps the models that fit the request, or explains why
// none does.
func (c *Catalog) embeddingChoice(tier string, models []EmbeddingModel, r EmbeddingRequest) (EmbeddingDecision, error) {
	d := EmbeddingDecision{Tier: tier}
	var dims, long []string
	for _, m := range models {
		switch {
		case !m.Embeds(r.Dimensions):
			dims = append(dims, m.dimensionRange())
		case r.LongestInput > m.ContextWindow:
			long = append(long, fmt.Sprintf("%s: %d", m.ID, m.ContextWindow))
		default:
			d.Candidates = append(d.Candidates, EmbeddingCandidate{Model: m, EstCost: m.Cost(Tokens{Prompt: r.InputTokens})})
		}
	}
	if len(d.Candidates) > 0 {
		return d, nil
	}
	what := "model " + models[0].ID
	if len(models) > 1 {
		what = "the models of " + tier
	}
	if len(dims) > 0 {
		return EmbeddingDecision{}, domain.Invalid("dimensions_not_supported", "dimensions",
			"%s cannot return vectors of %d dimensions (%s); ask for a length in range, leave dimensions out for the model's own, or use another model",
			what, r.Dimensions, strings.Join(dims, "; "))
	}
	return EmbeddingDecision{}, domain.Invalid("context_length_exceeded", "input",
		"an input of %d tokens is longer than %s takes (%s tokens at most); split the input", r.LongestInput, what, strings.Join(long, "; "))
}

// notAnEmbeddingModel is the error of a name that is no embedding model:
// a chat model or tier (400), or nothing the catalog has (404).
func (c *Catalog) notAnEmbeddingModel(name string) error {
	var ids []string
	for _, m := range c.EmbeddingModels() {
		ids = append(ids, m.ID)
	}
	var tiers []string
	for _, t := range c.EmbeddingTiers {
		tiers = append(tiers, t.Name)
	}
	use := fmt.Sprintf("POST /v1/embeddings takes auto, an embedding tier (%s) or an embedding model id (%s); see GET /v1/models",
		strings.Join(tiers, ", "), strings.Join(ids, ", "))
	if _, chat := c.byModel[name]; chat || isTier(name) {
		kind := "a chat model"
		if isTier(name) {
			kind = "a chat tier"
		}
		return &domain.Error{Kind: domain.ErrInvalid, Code: "not_an_embedding_model", Field: "model",
			Message: fmt.Sprintf("%q is %s, which does not embed: %s", name, kind, use)}
	}
	return &domain.Error{Kind: domain.ErrNotFound, Code: "model_not_found", Field: "model",
		Message: fmt.Sprintf("the model %q does not exist: %s", name, use)}
}

// errEmbeddingModelForChat is the 400 of an embedding model or tier named
// for a chat completion.
func errEmbeddingModelForChat(name string, c *Catalog) error {
	return &domain.Error{Kind: domain.ErrInvalid, Code: "not_a_chat_model", Field: "model",
		Message: fmt.Sprintf("%q is an embedding model, which does not chat: use it with POST /v1/embeddings; a completion takes auto, a tier (%s) or a chat model id; see GET /v1/models",
			name, strings.Join(c.tierList(), ", "))}
}

// Knows reports whether name is a tier or a model id of the catalog, of
// either kind: what a key's models limit may name.
func (c *Catalog) Knows(name string) bool {
	_, chatTier := c.Tier(name)
	_, embTier := c.byEmbeddingTier[name]
	return chatTier || embTier || c.known(name)
}
