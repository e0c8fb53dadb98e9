package spend

import (
	"context"
	"fmt"
	"time"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
)

// State is a limited key's requests and tokens of the current minute, for
// OpenAI's x-ratelimit-* headers: the limit (0: none), what is left after
// this request, and how long until the window resets.
type State struct {
	RequestsLimit, RequestsRemaining int64
	RequestsReset                    time.Duration
	TokensLimit, TokensRemaining     int64
	TokensReset                      time.Duration
}

type observerKey struct{}

// WithObserver returns a context whose Admit calls f with the key's
// State, admitted or refused, before it returns: how a server writes the
// rate-limit headers of every response of a limited key.
func WithObserver(ctx context.Context, f func(State)) context.Context {
	return context.WithValue(ctx, observerKey{}, f)
}

func observe(ctx context.Context, s State) {
	if f, ok := ctx.Value(observerKey{}).(func(State)); ok && (s.RequestsLimit > 0 || s.TokensLimit > 0) {
		f(s)
	}
}

// state is the State after asks were reserved (or refused) on the counts
// got.
func state(asks []ask, got []count, now time.Time) State {
	var s State
	for i, a := range asks {
		left := max(a.limit-got[i].used-got[i].reserved, 0)
		if a.fits(got[i]) {
			left = max(left-a.n, 0)
		}
		switch a.kind {
		case kindRequests:
			s.RequestsLimit, s.RequestsRemaining, s.RequestsReset = a.limit, left, a.end.Sub(now)
		case kindTokens:
			s.TokensLimit, s.TokensRemaining, s.TokensReset = a.limit, left, a.end.Sub(now)
		}
	}
	return s
}

// Refusal is a request refused by a key's limits: a 429 with a
// Retry-After. errors.As finds its *domain.Error.
type Refusal struct {
	Err *domain.Error
	// Retry is how long until a request may be admitted again (the
	// window's or the period's end).
	Retry time.Duration
}

func (r *Refusal) Error() string { return r.Err.Error() }

func (r *Refusal) Unwrap() error { return r.Err }

// RetryAfterSeconds is the Retry-After header's value: whole seconds,
// rounded up, at least 1.
func (r *Refusal) RetryAfterSeconds() int {
	s := int((r.Retry + time.Second - 1) / time.Second)
	return max(s, 1)
}

// refusal explains the first limit the request does not fit, budgets
// first (the key's, then its account's), then requests, then tokens.
func refusal(asks []ask, got []count, now time.Time) error {
	for _, k := range []kind{kindBudget, kindAccountBudget, kindRequests, kindTokens} {
		for i, a := range asks {
			if a.kind != k || a.fits(got[i]) {
				continue
			}
			return &Refusal{Err: explain(a, got[i], now), Retry: a.end.Sub(now)}
		}
	}
	return &Refusal{Err: domain.RateLimited("rate_limit_exceeded", "the key's limits do not admit this request now")}
}

// explain is the domain error of a that does not fit c.
func explain(a ask, c count, now time.Time) *domain.Error {
	inUse := account.MicroUSD(c.used + c.reserved)
	switch a.kind {
	case kindBudget, kindAccountBudget:
		whose := "this key's"
		if a.kind == kindAccountBudget {
			whose = "the account's"
		}
		left := max(account.MicroUSD(a.limit)-inUse, 0)
		when := "never resets (a total budget); raise it"
		if a.period != account.PeriodTotal {
			when = "resets at " + a.end.UTC().Format(time.RFC3339)
		}
		return &domain.Error{Kind: domain.ErrRateLimited, Code: "budget_exceeded", Message: fmt.Sprintf(
			"this request could cost up to $%s (its max_tokens, or the model's context, at the dearest candidate's price), and %s budget of $%s per %s has $%s left (spent $%s, $%s reserved by requests in flight); it %s, or lower max_tokens",
			account.MicroUSD(a.n).USD(), whose, account.MicroUSD(a.limit).USD(), a.period, left.USD(), account.MicroUSD(c.used).USD(), account.MicroUSD(c.reserved).USD(), when)}
	case kindRequests:
		return &domain.Error{Kind: domain.ErrRateLimited, Code: "rate_limit_exceeded", Message: fmt.Sprintf(
			"this key's limit of %d requests per minute is reached; retry in %ds", a.limit, int(a.end.Sub(now).Seconds())+1)}
	}
	return &domain.Error{Kind: domain.ErrRateLimited, Code: "rate_limit_exceeded", Message: fmt.Sprintf(
		"this request may use up to %d tokens (prompt and max_tokens) and this key's limit of %d tokens per minute has %d left; retry in %ds or lower max_tokens",
		a.n, a.limit, max(a.limit-c.used-c.reserved, 0), int(a.end.Sub(now).Seconds())+1)}
}
