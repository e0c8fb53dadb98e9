package spend

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/account"
)

// PlanQuota is the plan's count of one request, which the key middleware
// left to Admit so that the key, its limits and its quota are decided in
// one round trip (readapi/ratelimit.Deferred is one; see it for what the
// client sees). Admit sends it first in the key's reservation transaction
// when the request has the round to itself, and in a round trip of its own
// before a round of several requests of one key.
type PlanQuota interface {
	// Queue queues the count on b, in a transaction begun on the
	// database of spend_counters; a full window aborts the transaction.
	Queue(b *pgx.Batch)
	// Counted reads the outcome of the batch that ran Queue (its error):
	// the refusal (a 429) when the window was full, nil when counted,
	// the batch's error otherwise.
	Counted(batchErr error) error
	// Count counts it in its own round trip: the refusal when full.
	Count(ctx context.Context) error
}

type planQuotaKey struct{}

// WithPlanQuota returns a context whose Admit counts q with the key's
// reservation.
func WithPlanQuota(ctx context.Context, q PlanQuota) context.Context {
	return context.WithValue(ctx, planQuotaKey{}, q)
}

func planQuotaOf(ctx context.Context) PlanQuota {
	q, _ := ctx.Value(planQuotaKey{}).(PlanQuota)
	return q
}

// Reserves reports whether a key with these limits, of an account with
// this budget, costs its requests a reservation round trip (a budget,
// requests or tokens per minute): the requests whose plan count is worth
// deferring to it.
func Reserves(l account.KeyLimits, b account.Budget) bool {
	return l.MaxBudget > 0 || b.Max > 0 || l.RPM > 0 || l.TPM > 0
}
