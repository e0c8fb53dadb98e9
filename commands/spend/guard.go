package spend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
)

// Mailer sends the threshold mails; readapi/app.Mailer is one.
type Mailer interface {
	Send(ctx context.Context, to, subject, body string) error
}

// Config configures a Guard.
type Config struct {
	// Pool holds spend_counters; required.
	Pool *pgxpool.Pool
	// Store receives the threshold events; required.
	Store commands.Appender
	// TierOf is the tier of a model id ("" for none known), so that a key
	// listing a tier may use its models; required.
	TierOf func(model string) string
	// Mailer mails the thresholds; nil sends none.
	Mailer Mailer
	// Clock; default time.Now.
	Clock  func() time.Time
	Logger *slog.Logger
	// SettleTimeout bounds a settle, which runs even when the request's
	// context has ended. Default 10s.
	SettleTimeout time.Duration
	// Lease is how long a reservation is held for a request that never
	// settles (its process died): then Ledger.Sweep releases it. Run
	// renews the leases of requests still running (renew.go). Default 1h.
	Lease time.Duration
}

// Guard admits and settles the requests of limited keys. Safe for
// concurrent use.
type Guard struct {
	cfg      Config
	reserves *coalescer[reserveJob]
	settles  *coalescer[settleJob]

	// live are the admitted requests not settled yet, whose leases Run
	// renews (renew.go).
	mu   sync.Mutex
	live map[uuid.UUID]*hold
}

// New returns a Guard; it refuses a Config without a pool, a store or
// TierOf.
func New(cfg Config) (*Guard, error) {
	if cfg.Pool == nil || cfg.Store == nil || cfg.TierOf == nil {
		return nil, errors.New("spend: nil pool, store or TierOf")
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.SettleTimeout <= 0 {
		cfg.SettleTimeout = 10 * time.Second
	}
	if cfg.Lease <= 0 {
		cfg.Lease = time.Hour
	}
	g := &Guard{cfg: cfg, live: map[uuid.UUID]*hold{}}
	g.reserves = newCoalescer(cfg.SettleTimeout, func(ctx context.Context, jobs []reserveJob) { reserveRound(ctx, cfg.Pool, jobs) })
	g.settles = newCoalescer(cfg.SettleTimeout, func(ctx context.Context, jobs []settleJob) { settleRound(ctx, cfg.Pool, jobs) })
	return g, nil
}

// Admit refuses the request of caller, before any upstream call, when the
// key has expired (key_expired, 401), may not use one of models
// (model_not_allowed, 403), or when reserving maxCostUSD in its budget or
// its account's, one request of its requests per minute or maxTokens of
// its tokens per minute would pass a limit (budget_exceeded,
// rate_limit_exceeded: 429 with a Retry-After; *Refusal). Otherwise it
// reserves them and returns settle, to be called exactly once when the
// request has ended (failed, cut or gone included) with what it cost and
// the tokens it used. A key without limits costs no round trip.
func (g *Guard) Admit(ctx context.Context, caller complete.Caller, models []string, maxCostUSD float64, maxTokens int64) (func(ctx context.Context, costUSD float64, tokens int64), error) {
	now := g.cfg.Clock()
	l := caller.Limits
	if l.Expired(now) {
		return nil, &domain.Error{Kind: domain.ErrUnauthenticated, Code: "key_expired",
			Message: fmt.Sprintf("this API key expired at %s; mint a new one or extend it", l.ExpiresAt.Format(time.RFC3339))}
	}
	for _, m := range models {
		if !l.Allows(m, g.cfg.TierOf(m)) {
			return nil, &domain.Error{Kind: domain.ErrForbidden, Code: "model_not_allowed", Field: "model",
				Message: fmt.Sprintf("this API key may not use %s (its models limit allows %v); use one of those or model auto", m, l.Models)}
		}
	}
	asks := g.asks(caller, now, micros(maxCostUSD), maxTokens)
	quota := planQuotaOf(ctx)
	if len(asks) == 0 {
		if quota != nil {
			if err := quota.Count(ctx); err != nil {
				return nil, err
			}
		}
		return func(context.Context, float64, int64) {}, nil
	}
	id := uuid.New()
	got, ok, err := g.reserve(ctx, caller, id, now, asks, quota)
	if err != nil {
		return nil, err
	}
	observe(ctx, state(asks, got, now))
	if !ok {
		return nil, refusal(asks, got, now)
	}
	g.hold(id, now.Add(g.cfg.Lease), complete.CutOf(ctx))
	var once sync.Once
	return func(ctx context.Context, costUSD float64, tokens int64) {
		once.Do(func() {
			g.drop(id)
			g.settle(ctx, caller, id, asks, micros(costUSD), tokens)
		})
	}, nil
}

// reserve queues the reservation (with the request's plan count, if the
// middleware left it: quota) for the key's next round and waits for it. A caller that goes away meanwhile is answered ctx's error; if the
// round reserved for it, the reservation is settled at once, at no cost.
func (g *Guard) reserve(ctx context.Context, caller complete.Caller, id uuid.UUID, now time.Time, asks []ask, quota PlanQuota) ([]count, bool, error) {
	ch := make(chan reserveReply, 1)
	g.reserves.add(groupKey(asks), reserveJob{id: id, asks: asks, lease: g.cfg.Lease, quota: quota, reply: ch})
	select {
	case r := <-ch:
		if r.refused != nil {
			return nil, false, r.refused
		}
		if r.err != nil {
			return nil, false, fmt.Errorf("reserving the key's limits: %w", r.err)
		}
		return r.got, r.ok, nil
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.err == nil && r.ok {
				g.settle(context.WithoutCancel(ctx), caller, id, asks, 0, 0)
			}
		}()
		return nil, false, ctx.Err()
	}
}

// micros is an amount of US dollars in micro-dollars, rounded up (a cost
// computed in micro-dollars converts back exactly).
func micros(usd float64) int64 {
	if usd <= 0 || math.IsNaN(usd) {
		return 0
	}
	return int64(math.Ceil(math.Round(usd*1e9) / 1e3))
}

// settle replaces the reservations of asks by what the request spent, and
// records and mails the budget thresholds it crossed.
func (g *Guard) settle(ctx context.Context, caller complete.Caller, id uuid.UUID, asks []ask, cost, tokens int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.cfg.SettleTimeout)
	defer cancel()
	for i := range asks {
		switch asks[i].kind {
		case kindBudget, kindAccountBudget:
			asks[i].actual = cost
		case kindRequests:
			asks[i].actual = 1
		case kindTokens:
			asks[i].actual = max(tokens, 0)
		}
	}
	ch := make(chan settleReply, 1)
	g.settles.add(groupKey(asks), settleJob{id: id, asks: asks, reply: ch})
	var r settleReply
	select {
	case r = <-ch:
	case <-ctx.Done():
		r.err = ctx.Err()
	}
	after, err := r.after, r.err
	if err != nil {
		g.cfg.Logger.Error("settling a request's spend failed: its reservation stays counted until the period ends",
			"key_id", caller.KeyID, "err", err)
		return
	}
	g.thresholds(ctx, caller, asks, after)
}

// asks are the counters the request reserves in: the key's budget, its
// account's, its requests and its tokens of this minute.
func (g *Guard) asks(caller complete.Caller, now time.Time, cost, tokens int64) []ask {
	var out []ask
	key, acc := caller.KeyID.String(), caller.AccountID.String()
	l, b := caller.Limits, caller.AccountBudget
	if l.MaxBudget > 0 {
		s, e := l.Period.Window(now)
		out = append(out, ask{kind: kindBudget, bucket: KeyBudgetBucket(key, l.Period), start: s, end: e,
			n: cost, limit: int64(l.MaxBudget), period: l.Period})
	}
	if b.Max > 0 {
		s, e := b.Period.Window(now)
		out = append(out, ask{kind: kindAccountBudget, bucket: AccountBudgetBucket(acc, b.Period), start: s, end: e,
			n: cost, limit: int64(b.Max), period: b.Period})
	}
	minute := now.UTC().Truncate(time.Minute)
	if l.RPM > 0 {
		out = append(out, ask{kind: kindRequests, bucket: "key:" + key + ":rpm", start: minute, end: minute.Add(time.Minute), n: 1, limit: l.RPM})
	}
	if l.TPM > 0 {
		out = append(out, ask{kind: kindTokens, bucket: "key:" + key + ":tpm", start: minute, end: minute.Add(time.Minute), n: tokens, limit: l.TPM})
	}
	return out
}

// KeyBudgetBucket and AccountBudgetBucket name the counters of a key's
// and an account's budget in a period, for the spend queries.
func KeyBudgetBucket(key string, p account.Period) string {
	return "key:" + key + ":budget:" + string(p)
}

// AccountBudgetBucket: see KeyBudgetBucket.
func AccountBudgetBucket(acc string, p account.Period) string {
	return "account:" + acc + ":budget:" + string(p)
}
