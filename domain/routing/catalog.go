package routing

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/arr-dev/arr/domain"
)

//go:embed catalog.json
var defaultCatalog []byte

// DefaultCatalogJSON returns the catalog shipped with arr (catalog.json
// beside this file); ARR_CATALOG names a file that replaces it.
func DefaultCatalogJSON() []byte { return bytes.Clone(defaultCatalog) }

// MicroUSD is an amount of money in millionths of a US dollar.
type MicroUSD = int64

// Model is one upstream model of a tier. Prices are kept in micro-dollars
// per million tokens, so the cost of any request is an integer number of
// micro-dollars (rounded up).
type Model struct {
	ID            string `json:"id"`
	Vendor        string `json:"vendor"`
	UpstreamModel string `json:"upstream_model"`
	BaseURL       string `json:"base_url"`
	APIKeyEnv     string `json:"api_key_env"`
	// API is the upstream's wire format (APIOpenAI, APIAnthropic, …; the
	// catalog's "api", openai when it names none).
	API string `json:"api"`
	// APIVersion and Deployment are an azure_openai model's api-version
	// and deployment (Deployment defaults to the upstream model).
	APIVersion string `json:"api_version"`
	Deployment string `json:"deployment"`
	// Region is a bedrock or vertex model's region; Project and Location
	// a vertex model's.
	Region   string `json:"region"`
	Project  string `json:"project"`
	Location string `json:"location"`
	// CredentialsEnv names the variable of a vertex model's
	// service-account JSON file, or of an azure_openai model's Entra ID
	// token (sent instead of the api-key).
	CredentialsEnv string `json:"credentials_env"`
	// InputPerM and OutputPerM are micro-dollars per million tokens
	// (numerically: US dollars per thousand tokens times 1e9).
	InputPerM  int64 `json:"-"`
	OutputPerM int64 `json:"-"`
	// CachedInputPerM is the price of a prompt token read from the
	// upstream's prompt cache, CacheWritePerM of one written to it, in the
	// same unit; both are InputPerM when the catalog names none.
	CachedInputPerM int64   `json:"-"`
	CacheWritePerM  int64   `json:"-"`
	Quality         float64 `json:"quality"`
	ContextWindow   int64   `json:"context_window"`
	Tier            string  `json:"tier"`
}

// CostPer1KUSD is the model's blended price per 1k tokens in US dollars:
// the mean of its input and output prices (one input token per output
// token). It is what routing.cost_per_1k reports.
func (m Model) CostPer1KUSD() float64 {
	return float64(m.InputPerM+m.OutputPerM) / 2 / 1e9
}

// InputPer1KUSD, OutputPer1KUSD, CachedInputPer1KUSD and
// CacheWritePer1KUSD are the catalog's prices.
func (m Model) InputPer1KUSD() float64       { return float64(m.InputPerM) / 1e9 }
func (m Model) OutputPer1KUSD() float64      { return float64(m.OutputPerM) / 1e9 }
func (m Model) CachedInputPer1KUSD() float64 { return float64(m.CachedInputPerM) / 1e9 }
func (m Model) CacheWritePer1KUSD() float64  { return float64(m.CacheWritePerM) / 1e9 }

// Tier is a rung of the price ladder with one or more models, in failover
// order.
type Tier struct {
	Name   string  `json:"name"`
	Models []Model `json:"models"`
	// Quality is the tier's prior quality: the lowest of its models' (a
	// request may fail over to any of them).
	Quality float64 `json:"quality"`
	// ContextWindow is the smallest of its models'.
	ContextWindow int64 `json:"context_window"`
}

// Catalog is the chat tiers and the embedding tiers, each cheapest
// first. Build one with ParseCatalog.
type Catalog struct {
	Tiers []Tier
	// EmbeddingTiers are the embedding models' tiers (embedding.go); none
	// when the catalog file has no embedding_tiers.
	EmbeddingTiers  []EmbeddingTier
	byModel         map[string]Model
	byTier          map[string]int
	byEmbedding     map[string]EmbeddingModel
	byEmbeddingTier map[string]int
	aliases         []alias // in the order Resolve tries them (aliases.go)
}

func newCatalog() *Catalog {
	return &Catalog{byModel: map[string]Model{}, byTier: map[string]int{}, byEmbedding: map[string]EmbeddingModel{}, byEmbeddingTier: map[string]int{}}
}

type fileModel struct {
	ID             string   `json:"id"`
	Vendor         string   `json:"vendor"`
	UpstreamModel  string   `json:"upstream_model"`
	BaseURL        string   `json:"base_url"`
	APIKeyEnv      string   `json:"api_key_env"`
	API            string   `json:"api"`
	APIVersion     string   `json:"api_version"`
	Deployment     string   `json:"deployment"`
	Region         string   `json:"region"`
	Project        string   `json:"project"`
	Location       string   `json:"location"`
	CredentialsEnv string   `json:"credentials_env"`
	InputPer1K     *float64 `json:"input_usd_per_1k"`
	OutputPer1K    *float64 `json:"output_usd_per_1k"`
	CachedPer1K    *float64 `json:"cached_input_usd_per_1k"`
	WritePer1K     *float64 `json:"cache_write_usd_per_1k"`
	Quality        float64  `json:"quality"`
	ContextWindow  int64    `json:"context_window"`
}

type fileCatalog struct {
	Tiers []struct {
		Name   string      `json:"name"`
		Models []fileModel `json:"models"`
	} `json:"tiers"`
	EmbeddingTiers []fileEmbeddingTier `json:"embedding_tiers"`
	Aliases        map[string]string   `json:"aliases"`
}

// TierNames are the tier names a catalog may use, cheapest first.
var tierNames = []string{"nano", "small", "mid", "high"}

// TierNames returns the tier names a catalog may use, cheapest first.
func TierNames() []string { return append([]string(nil), tierNames...) }

// ParseCatalog reads a catalog file: {"tiers":[{"name","models":[{id,
// vendor, upstream_model, base_url, api_key_env, api, api_version,
// deployment, region, project, location, credentials_env, input_usd_per_1k,
// output_usd_per_1k, cached_input_usd_per_1k, cache_write_usd_per_1k,
// quality, context_window}]}], "embedding_tiers":
// [{"name", "models":[{id, vendor, upstream_model, base_url, api_key_env,
// input_usd_per_1k, dimensions, min_dimensions, max_input_tokens}]}],
// "aliases":{name: target}}. Tiers are nano, small, mid and high (each at
// most once, in that order, at least one); embedding tiers (optional)
// embed-small and embed-large, the same way; model ids are unique across
// both kinds and may not be a tier name or "auto". Aliases are optional
// (see WithAliases). The prompt-cache prices (the price of an input token
// read from the upstream's prompt cache, and of one written to it) are
// optional and default to input_usd_per_1k. api is the upstream's wire
// format (api.go: openai when absent; an API this build has no adapter
// for is refused); api_version (required) and deployment are
// azure_openai's, region bedrock's and vertex's, project and location
// vertex's, credentials_env vertex's and azure_openai's: each refused on
// a model of another API.
func ParseCatalog(data []byte) (*Catalog, error) {
	var f fileCatalog
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if len(f.Tiers) == 0 {
		return nil, fmt.Errorf("catalog: no tiers")
	}
	c := newCatalog()
	next := 0
	for _, ft := range f.Tiers {
		idx := -1
		for i := next; i < len(tierNames); i++ {
			if tierNames[i] == ft.Name {
				idx = i
			}
		}
		if idx < 0 {
			return nil, fmt.Errorf("catalog: tier %q: tiers are %s, each at most once, cheapest first", ft.Name, strings.Join(tierNames, ", "))
		}
		next = idx + 1
		if len(ft.Models) == 0 {
			return nil, fmt.Errorf("catalog: tier %s has no models", ft.Name)
		}
		t := Tier{Name: ft.Name, Quality: 1, ContextWindow: math.MaxInt64}
		for _, fm := range ft.Models {
			m, err := fm.model(ft.Name)
			if err != nil {
				return nil, err
			}
			if _, dup := c.byModel[m.ID]; dup {
				return nil, fmt.Errorf("catalog: model id %q appears twice", m.ID)
			}
			c.byModel[m.ID] = m
			t.Models = append(t.Models, m)
			t.Quality = min(t.Quality, m.Quality)
			t.ContextWindow = min(t.ContextWindow, m.ContextWindow)
		}
		c.byTier[t.Name] = len(c.Tiers)
		c.Tiers = append(c.Tiers, t)
	}
	if err := c.parseEmbeddingTiers(f.EmbeddingTiers); err != nil {
		return nil, err
	}
	out, err := c.WithAliases(f.Aliases)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	return out, nil
}

func (fm fileModel) model(tier string) (Model, error) {
	bad := func(format string, args ...any) (Model, error) {
		return Model{}, fmt.Errorf("catalog: tier %s, model %q: %s", tier, fm.ID, fmt.Sprintf(format, args...))
	}
	switch {
	case fm.ID == "" || fm.ID == "auto" || isTier(fm.ID) || isEmbeddingTier(fm.ID):
		return bad("id must be set and may not be \"auto\" or a tier name")
	case fm.Vendor == "" || strings.ContainsAny(fm.Vendor, " /"):
		return bad("vendor must be a single word")
	case fm.BaseURL == "" || !(strings.HasPrefix(fm.BaseURL, "http://") || strings.HasPrefix(fm.BaseURL, "https://")):
		return bad("base_url must be an http(s) URL")
	case fm.InputPer1K == nil || fm.OutputPer1K == nil || *fm.OutputPer1K == 0:
		return bad("input_usd_per_1k and output_usd_per_1k are required; output must be positive")
	case !price(fm.InputPer1K) || !price(fm.OutputPer1K):
		return bad("input_usd_per_1k and output_usd_per_1k must be from 0 to %g", maxPricePer1K)
	case !price(fm.CachedPer1K):
		return bad("cached_input_usd_per_1k must be from 0 to %g (leave it out to price cached input as input)", maxPricePer1K)
	case !price(fm.WritePer1K):
		return bad("cache_write_usd_per_1k must be from 0 to %g (leave it out to price cache writes as input)", maxPricePer1K)
	case fm.Quality <= 0 || fm.Quality > 1:
		return bad("quality must be in (0, 1]")
	case fm.ContextWindow < 1024:
		return bad("context_window must be at least 1024 tokens")
	}
	api, err := fm.checkAPI()
	if err != nil {
		return bad("%v", err)
	}
	up := fm.UpstreamModel
	if up == "" {
		up = fm.ID
	}
	in := perM(*fm.InputPer1K)
	deployment := fm.Deployment
	if api == APIAzureOpenAI && deployment == "" {
		deployment = up
	}
	if api == APIAzureOpenAI && (deployment == "." || deployment == ".." || strings.ContainsAny(deployment, "/?#&\\%")) {
		// One path segment of {base_url}/openai/deployments/{deployment}/...:
		// a dot segment would be resolved away by the resource's front end.
		return bad("the azure_openai deployment %q (or the upstream_model it defaults to) must be one path segment: not . or .., no / ? # & \\ %%", deployment)
	}
	return Model{
		ID: fm.ID, Vendor: fm.Vendor, UpstreamModel: up, BaseURL: strings.TrimRight(fm.BaseURL, "/"), APIKeyEnv: fm.APIKeyEnv,
		API: api, APIVersion: fm.APIVersion, Deployment: deployment, Region: fm.Region, Project: fm.Project, Location: fm.Location,
		CredentialsEnv: fm.CredentialsEnv,
		InputPerM:      in, OutputPerM: perM(*fm.OutputPer1K), CachedInputPerM: perMOr(fm.CachedPer1K, in), CacheWritePerM: perMOr(fm.WritePer1K, in),
		Quality: fm.Quality, ContextWindow: fm.ContextWindow, Tier: tier,
	}, nil
}

// maxPricePer1K bounds a catalog price, US dollars per 1k tokens: over a
// thousand times the dearest model's output price, and in micro-dollars
// per million tokens (perM) far inside int64.
const maxPricePer1K = 1000.0

// price: p is absent, or a price from 0 to maxPricePer1K (not NaN).
func price(p *float64) bool { return p == nil || (*p >= 0 && *p <= maxPricePer1K) }

// perM is a catalog price (US dollars per 1k tokens) in micro-dollars per
// million tokens; perMOr is def when the price is not given.
func perM(usdPer1K float64) int64 { return int64(math.Round(usdPer1K * 1e9)) }

func perMOr(usdPer1K *float64, def int64) int64 {
	if usdPer1K == nil {
		return def
	}
	return perM(*usdPer1K)
}

func isTier(s string) bool {
	for _, t := range tierNames {
		if t == s {
			return true
		}
	}
	return false
}

// Model returns a model by id.
func (c *Catalog) Model(id string) (Model, bool) {
	m, ok := c.byModel[id]
	return m, ok
}

// Tier returns a tier by name.
func (c *Catalog) Tier(name string) (Tier, bool) {
	i, ok := c.byTier[name]
	if !ok {
		return Tier{}, false
	}
	return c.Tiers[i], true
}

// Vendors returns the vendors of the catalog's models.
func (c *Catalog) Vendors() []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range c.Tiers {
		for _, m := range t.Models {
			if !seen[m.Vendor] {
				seen[m.Vendor] = true
				out = append(out, m.Vendor)
			}
		}
	}
	return out
}

// Models returns every model, tier by tier.
func (c *Catalog) Models() []Model {
	var out []Model
	for _, t := range c.Tiers {
		out = append(out, t.Models...)
	}
	return out
}

// WithBaseURL returns a copy of the catalog whose every model, of both
// kinds, is served by one OpenAI-compatible server (vLLM, Ollama,
// llama.cpp, a test upstream) with one API-key variable. A chatModel
// other than "" is the model name sent to it for every chat model (the
// one model a local server has, like llama3.2), in place of each model's
// upstream_model; routing, prices and audit entries still name the
// catalog's models. Every chat model is then reached through that
// server's OpenAI API, whatever its catalog api.
func (c *Catalog) WithBaseURL(baseURL, apiKeyEnv, chatModel string) *Catalog {
	out := newCatalog()
	out.aliases = c.aliases
	for _, t := range c.Tiers {
		nt := t
		nt.Models = nil
		for _, m := range t.Models {
			m.BaseURL, m.APIKeyEnv = strings.TrimRight(baseURL, "/"), apiKeyEnv
			m.API, m.APIVersion, m.Deployment, m.Region, m.Project, m.Location, m.CredentialsEnv = APIOpenAI, "", "", "", "", "", ""
			if chatModel != "" {
				m.UpstreamModel = chatModel
			}
			nt.Models = append(nt.Models, m)
			out.byModel[m.ID] = m
		}
		out.byTier[nt.Name] = len(out.Tiers)
		out.Tiers = append(out.Tiers, nt)
	}
	for _, t := range c.EmbeddingTiers {
		nt := EmbeddingTier{Name: t.Name}
		for _, m := range t.Models {
			m.BaseURL, m.APIKeyEnv = strings.TrimRight(baseURL, "/"), apiKeyEnv
			nt.Models = append(nt.Models, m)
			out.byEmbedding[m.ID] = m
		}
		out.byEmbeddingTier[nt.Name] = len(out.EmbeddingTiers)
		out.EmbeddingTiers = append(out.EmbeddingTiers, nt)
	}
	return out
}

// errUnknownModel is the 404 of a model that is not in the catalog (the
// 400 not_a_chat_model of an embedding model or tier).
func errUnknownModel(name string, c *Catalog) error {
	if _, emb := c.byEmbedding[name]; emb || isEmbeddingTier(name) {
		return errEmbeddingModelForChat(name, c)
	}
	var ids []string
	for _, m := range c.Models() {
		ids = append(ids, m.ID)
	}
	return &domain.Error{Kind: domain.ErrNotFound, Code: "model_not_found", Field: "model",
		Message: fmt.Sprintf("the model %q does not exist: use auto, a tier (%s) or a model id (%s); see GET /v1/models",
			name, strings.Join(c.tierList(), ", "), strings.Join(ids, ", "))}
}

func (c *Catalog) tierList() []string {
	var out []string
	for _, t := range c.Tiers {
		out = append(out, t.Name)
	}
	return out
}
