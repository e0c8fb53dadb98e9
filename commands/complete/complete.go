package complete

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/singleflight"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/guardrail"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/eventstore"
)

// Recorder appends completions to the audit chain; *commands.AuditChain is
// one.
type Recorder interface {
	Record(ctx context.Context, c commands.RecordCompletion) (commands.Recorded, error)
}

// Config configures a Handler.
type Config struct {
	Catalog  *routing.Catalog
	Upstream *upstream.Client
	Chain    Recorder
	// HashKey keys the request_hash and response_hash of audit entries
	// (HMAC-SHA-256).
	HashKey audit.HashKey
	// Quality is the tier-quality read model the router corrects its
	// predictions with; nil: none.
	Quality FeedbackSource
	// QualityRefresh is how often the router re-reads Quality. Default 1s.
	QualityRefresh time.Duration
	Cache          CacheConfig
	// RecordTimeout bounds the wait for a completion's audit entry while
	// it is still queued: an entry not sent to the store by then is
	// withdrawn and the completion fails. Default 15s.
	RecordTimeout time.Duration
	// Registerer receives the routing series (completions, upstream
	// latency, failovers, cost, tokens); nil registers nothing.
	Registerer prometheus.Registerer
	// Tracer starts the completion's spans (trace.go); nil: none.
	Tracer trace.Tracer
	Logger *slog.Logger
	// Clock returns the current time. Default time.Now.
	Clock func() time.Time
	// Limits enforces the keys' limits (spend.Guard); nil: none.
	Limits Admitter
	// MaxDuration caps a completion's duration, a stream's included
	// (duration.go). Default 30m.
	MaxDuration time.Duration
	// Guardrails configures the guardrails' enforcement (guardrail.go).
	Guardrails GuardrailConfig
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
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	if c.RecordTimeout <= 0 {
		c.RecordTimeout = 15 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.MaxDuration <= 0 {
		c.MaxDuration = 30 * time.Minute
	}
	return nil
}

// Handler runs completions. Safe for concurrent use.
type Handler struct {
	cfg   Config
	cache *cache
	// flights makes one upstream call per cache key at a time (flight.go).
	flights singleflight.Group
	fb      *feedbackView
	m       *metrics
	engines engines
}

// New returns a Handler; it refuses a Config without a catalog, an
// upstream client, an audit chain or a hash key.
func New(cfg Config) (*Handler, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg, cache: newCache(cfg.Cache), fb: newFeedbackView(cfg.Quality, cfg.QualityRefresh, cfg.Logger), m: newMetrics(cfg.Registerer)}, nil
}

// Catalog is the catalog the handler routes over.
func (h *Handler) Catalog() *routing.Catalog { return h.cfg.Catalog }

// BreakerStates returns each upstream model's breaker state ("closed",
// "open" or "half-open"); models never called are left out.
func (h *Handler) BreakerStates() map[string]string { return h.cfg.Upstream.BreakerStates() }

// CacheStats reports the response cache.
func (h *Handler) CacheStats() CacheStats { return h.cache.stats() }

// Caller is who asks for the completion: the key's principal as the
// identity read model knows it, its limits included.
type Caller struct {
	AccountID uuid.UUID
	KeyID     uuid.UUID
	Plan      account.Plan
	// Email is the account's address (budget mails go to it).
	Email string
	// Limits are the key's own; AccountBudget is its account's budget,
	// shared by its keys.
	Limits        account.KeyLimits
	AccountBudget account.Budget
	// Guardrails are the guardrails that apply to the key (its own, else
	// its account's; zero: none).
	Guardrails guardrail.Policy
}

// Admitter enforces keys' limits; *spend.Guard is one. Admit refuses a
// request (a domain error) or reserves its maximum cost and tokens before
// any upstream call; settle is called exactly once when the request has
// ended, with what it cost and the tokens it used.
type Admitter interface {
	Admit(ctx context.Context, caller Caller, models []string, maxCostUSD float64, maxTokens int64) (settle func(ctx context.Context, costUSD float64, tokens int64), err error)
}

// CacheMode is the client's choice of the response cache.
type CacheMode int

// The cache modes: automatic (temperature 0 and no tools), on and off.
const (
	CacheAuto CacheMode = iota
	CacheOn
	CacheOff
)

// Command is one completion to run.
type Command struct {
	Caller    Caller
	Request   *Request
	Cache     CacheMode
	RequestID string
}

// Routing is the routing object of a completion.
type Routing struct {
	Tier            string  `json:"tier"`
	Model           string  `json:"model"`
	Vendor          string  `json:"vendor"`
	DifficultyScore float64 `json:"difficulty_score"`
	AuditHash       string  `json:"audit_hash"`
	CostPer1K       float64 `json:"cost_per_1k"`
	CostUSD         float64 `json:"cost_usd"`
	CacheHit        bool    `json:"cache_hit"`
	// CacheReadTokens and CacheWriteTokens are the prompt tokens the
	// upstream read from and wrote to its prompt cache, billed at the
	// model's cached-input and cache-write prices (0 on a cache hit).
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	ElapsedSec       float64 `json:"elapsed_sec"`
	Attempts         int     `json:"attempts"`
	PredictedQuality float64 `json:"predicted_quality"`
	AuditPosition    uint64  `json:"audit_position"`
}

// Result is a completion: Stream is set for a streamed request (the caller
// reads it to the end and closes it), Reply otherwise.
type Result struct {
	Reply  Reply
	Stream *Stream
}

// Reply is a whole completion, recorded in the audit chain.
type Reply struct {
	// Body is the upstream's chat.completion (or the cached one), byte for
	// byte.
	Body []byte
	// HasRouting: Body has a "routing" field of its own, which the
	// caller's routing object replaces.
	HasRouting bool
	Routing    Routing
	Usage      Usage
	// Native: Body is the upstream's reply in the request's own API (a
	// Message), passed through (native.go); else a chat completion.
	Native bool
}

// call is one completion in progress.
type call struct {
	start   time.Time
	caller  Caller
	req     *Request
	dec     routing.Decision
	cacheOn bool
	key     string
	// native: the candidate that answered took the request as it came
	// (native.go), and its reply or stream is in its own API.
	native bool
	md     eventstore.Metadata
	spend  spending
	// guard is the caller's compiled guardrails (nil: none); fired, the
	// rules that fired; filters, a stream's output filter per choice.
	guard   *guardrail.Engine
	fired   []guardrail.Fired
	filters map[int]*guardrail.StreamFilter
	// rewritten: the guardrails changed the prompt, or scan the output,
	// which they do on chat completions only (translatedOnly).
	rewritten bool
}

// handle runs one completion (Handle, trace.go): it routes the request, answers from the
// cache or calls the candidates in failover order (a cacheable
// non-streamed request waits for an identical one's call in flight
// instead: flight.go), and records the
// completion in the audit chain before it returns a reply; a stream is
// recorded when it ends (Stream.Next). A completion that could not be
// recorded is an error, never a reply.
//
// Errors: a domain error for a request routing refuses (unknown model, a
// ceiling no tier meets, ...), *UpstreamFailure when no candidate answered,
// *Refused when an upstream refused the request itself, an error wrapping
// domain.ErrUnavailable when the audit chain did not record it, and
// commands.ErrOutcomeUnknown when the chain cannot tell.
func (h *Handler) handle(ctx context.Context, cmd Command) (res Result, err error) {
	ctx, release := bounded(ctx, h.cfg.MaxDuration)
	var k *call
	var st *Stream
	if cmd.Request.Stream {
		st = &Stream{h: h, ctx: ctx, release: release, deadline: time.Now().Add(h.cfg.MaxDuration)}
		k = &st.call
	} else {
		k = &call{}
	}
	defer func() {
		if res.Stream == nil {
			release() // a stream ends its context when it is closed
		}
	}()
	k.start, k.caller, k.req = h.cfg.Clock(), cmd.Caller, cmd.Request
	if err := h.guardPrompt(ctx, k, cmd.RequestID); err != nil {
		return Result{}, err
	}
	if err := h.guardTools(ctx, k, cmd.RequestID); err != nil {
		return Result{}, err
	}
	if err := h.guardJoined(ctx, k, cmd.RequestID); err != nil {
		return Result{}, err
	}
	k.dec, err = h.route(ctx, k)
	if err != nil {
		return Result{}, err
	}
	if err := k.translatedOnly(); err != nil {
		return Result{}, err
	}
	k.req.keepEstimate()
	if err := h.admit(ctx, k); err != nil {
		return Result{}, err
	}
	defer func() {
		// Also when run panics. A stream settles when it ends or is
		// closed; a flight's leader that left, when the flight lands.
		if res.Stream == nil && !k.spend.deferred {
			k.settle(ctx)
		}
	}()
	return h.run(ctx, k, st, cmd.Cache, cmd.RequestID)
}

// run is Handle's completion once routed and admitted.
func (h *Handler) run(ctx context.Context, k *call, st *Stream, mode CacheMode, requestID string) (Result, error) {
	k.md = commands.NewMetadata("key:"+k.caller.KeyID.String(), requestID)
	switch mode {
	case CacheOn:
		k.cacheOn = h.cache.enabled()
	case CacheOff:
	default:
		k.cacheOn = h.cache.enabled() && k.req.autoCacheable()
	}
	if k.guard != nil && k.guard.ScansOutput() {
		k.cacheOn = false // the cache keeps replies as the upstream sent them
	}
	if k.req.nativeFor(k.dec.Candidates[0].Model) {
		k.cacheOn = false // its reply is no chat completion (native.go)
	}
	if k.cacheOn {
		k.key = k.req.CacheKey(k.caller.AccountID.String())
		if hit, ok := h.cache.get(k.key, k.start); ok {
			return h.serveCached(ctx, k, st, hit)
		}
		if st == nil {
			return h.flight(ctx, k)
		}
		h.cache.missed() // a stream does not join a flight (flight.go)
	}
	resp, attempts, err := h.dispatch(ctx, k)
	if err != nil {
		return Result{}, err
	}
	if st != nil {
		st.relay(resp, attempts)
		return Result{Stream: st}, nil
	}
	rep, err := h.reply(ctx, k, resp, attempts)
	return Result{Reply: rep}, err
}
