package embed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/routing"
)

// Admitter holds a key's limits (budgets, rate limits, allowed models,
// expiry): Admit refuses a request (a domain error) or reserves its
// maximum cost and tokens before any upstream call; settle records what
// was really spent and is called exactly once, also when the call failed
// or the client went away. commands/spend's Guard is one.
type Admitter interface {
	Admit(ctx context.Context, caller complete.Caller, models []string, maxCostUSD float64, maxTokens int64) (settle func(ctx context.Context, costUSD float64, tokens int64), err error)
}

// Config configures a Handler.
type Config struct {
	Catalog  *routing.Catalog
	Upstream *upstream.Client
	// Chain records each request (the completions' audit chain).
	Chain complete.Recorder
	// HashKey keys the request_hash and response_hash of audit entries.
	HashKey audit.HashKey
	// Admitter enforces the key's limits; nil: no key limits.
	Admitter Admitter
	// RecordTimeout bounds the wait for an audit entry while it is still
	// queued (then it is withdrawn and the request fails). Default 15s.
	RecordTimeout time.Duration
	// Registerer receives the embedding series; nil registers nothing.
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	// Clock returns the current time. Default time.Now.
	Clock func() time.Time
}

func (c *Config) validate() error {
	var errs []error
	if c.Catalog == nil {
		errs = append(errs, errors.New("no catalog"))
	}
	if c.Upstream == nil {
		errs = append(errs, errors.New("no upstream client"))
	}
	if c.Chain == nil {
		errs = append(errs, errors.New("no audit chain"))
	}
	if !c.HashKey.Valid() {
		errs = append(errs, errors.New("no audit hash key"))
	}
	if c.RecordTimeout < 0 {
		errs = append(errs, fmt.Errorf("RecordTimeout is negative (%s)", c.RecordTimeout))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	if c.RecordTimeout == 0 {
		c.RecordTimeout = 15 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return nil
}

// Handler runs embeddings requests. Safe for concurrent use.
type Handler struct {
	cfg Config
	m   *metrics
}

// New returns a Handler; it refuses a Config without a catalog, an
// upstream client, an audit chain or a hash key.
func New(cfg Config) (*Handler, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg, m: newMetrics(cfg.Registerer)}, nil
}

// Command is one embeddings request to run.
type Command struct {
	Caller    complete.Caller
	Request   *Request
	RequestID string
	// Allow is the caller's key's models limit: whether it may use a model
	// id of a tier (nil: every model). Routing chooses among the allowed
	// only, so auto never picks a model the key may not use.
	Allow func(id, tier string) bool
}

// Routing is the routing object of an embeddings reply.
type Routing struct {
	Tier   string `json:"tier"`
	Model  string `json:"model"`
	Vendor string `json:"vendor"`
	// Dimensions is the length of every vector of the reply.
	Dimensions    int     `json:"dimensions"`
	AuditHash     string  `json:"audit_hash"`
	AuditPosition uint64  `json:"audit_position"`
	CostPer1K     float64 `json:"cost_per_1k"`
	CostUSD       float64 `json:"cost_usd"`
	ElapsedSec    float64 `json:"elapsed_sec"`
	Attempts      int     `json:"attempts"`
}

// Result is an answered request.
type Result struct {
	// Body is OpenAI's list of embeddings as the client gets it, less the
	// routing object: what the audit entry's response_hash hashes.
	Body    []byte
	Routing Routing
	Usage   complete.Usage
}

// Handle runs one request: route, admit, call the candidates in failover
// order, check and encode the vectors, record the audit entry, and settle
// the admission with what was spent.
//
// Errors: a domain error for a request routing or the Admitter refuses,
// *complete.UpstreamFailure when no candidate answered (or none answered
// with the vectors asked for), *complete.Refused when an upstream refused
// the request itself, an error wrapping domain.ErrUnavailable when the
// audit chain did not record it, and commands.ErrOutcomeUnknown when the
// chain cannot tell.
func (h *Handler) Handle(ctx context.Context, cmd Command) (Result, error) {
	k := &call{start: h.cfg.Clock(), caller: cmd.Caller, req: cmd.Request,
		md: commands.NewMetadata("key:"+cmd.Caller.KeyID.String(), cmd.RequestID)}
	bound, longest := cmd.Request.bound()
	var err error
	k.dec, err = routing.RouteEmbedding(h.cfg.Catalog, routing.EmbeddingRequest{
		Model: cmd.Request.Model, Dimensions: cmd.Request.Dimensions, InputTokens: bound, LongestInput: longest, Allow: cmd.Allow,
	})
	if err != nil {
		return Result{}, err
	}
	settle := func(context.Context, float64, int64) {}
	if h.cfg.Admitter != nil {
		models := make([]string, len(k.dec.Candidates))
		var maxCost routing.MicroUSD
		for i, c := range k.dec.Candidates {
			models[i] = c.Model.ID
			maxCost = max(maxCost, c.EstCost)
		}
		if settle, err = h.cfg.Admitter.Admit(ctx, cmd.Caller, models, float64(maxCost)/1e6, bound); err != nil {
			return Result{}, err
		}
	}
	res, spent, err := h.run(ctx, k)
	settle(context.WithoutCancel(ctx), float64(spent.cost)/1e6, spent.tokens)
	return res, err
}

// call is one request in progress.
type call struct {
	start  time.Time
	caller complete.Caller
	req    *Request
	dec    routing.EmbeddingDecision
	md     commands.Metadata
}

// spent is what an answered request cost upstream.
type spent struct {
	cost   routing.MicroUSD
	tokens int64
}

// run calls the upstreams and records the answer.
func (h *Handler) run(ctx context.Context, k *call) (Result, spent, error) {
	ans, err := h.dispatch(ctx, k)
	if err != nil {
		return Result{}, spent{}, err
	}
	m := ans.model
	u := ans.usage(k.req)
	cost := m.Cost(routing.Tokens{Prompt: u.Prompt})
	sp := spent{cost: cost, tokens: u.Prompt}
	body, err := ans.encode(k.req, u)
	if err != nil {
		return Result{}, sp, err
	}
	rec, err := h.record(ctx, k, ans, u, cost, h.cfg.HashKey.Sum(body))
	if err != nil {
		return Result{}, sp, err
	}
	h.m.embedded(m.Tier, m.ID, u.Prompt, cost)
	return Result{Body: body, Usage: u, Routing: Routing{
		Tier: m.Tier, Model: m.ID, Vendor: m.Vendor, Dimensions: ans.dims, AuditHash: rec.Hash, AuditPosition: rec.Position,
		CostPer1K: m.InputPer1KUSD(), CostUSD: float64(cost) / 1e6, ElapsedSec: seconds(h.cfg.Clock().Sub(k.start)), Attempts: ans.attempts,
	}}, sp, nil
}
