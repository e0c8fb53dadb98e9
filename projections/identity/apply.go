package identity

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/signin"
	"github.com/arr-dev/arr/projections"
)

// newBatch begins a batch of identity. Each event goes to the applier of its type,
// a method of batch that adds it to the batch's rows; the rows are then
// written with one set-based statement per table and operation
// (batch.flush), so a rebuild runs at tens of thousands of events a
// second.
func newBatch() projections.Batch {
	b := &batch{}
	return projections.Batch{Handlers: []projections.Handler{
		fold(b.accountCreated), fold(b.planChanged), fold(b.sessionStarted), fold(b.sessionEnded),
		fold(b.keyIssued), fold(b.keyRevoked), fold(b.keyLimitsSet), fold(b.accountBudgetSet),
	}, Flush: b.flush}
}

// fold makes an applier of a batch the handler of its event type.
func fold[T any, P interface {
	*T
	domain.Event
}](apply func(v *T, pos int64)) projections.Handler {
	return projections.On[T, P](func(_ context.Context, _ pgx.Tx, e projections.Event, v *T) error {
		apply(v, int64(e.Position))
		return nil
	})
}

// batch is what one batch of identity writes: rows new in the batch, into which later
// events of the batch fold (later events win, except that a key's first
// revocation counts), and changes to rows of earlier batches. Not safe
// for concurrent use.
type batch struct {
	accounts keyed[accountRow] // new accounts, their plan changes folded in
	plans    keyed[planRow]    // plan changes of earlier accounts, the last per account
	sessions keyed[sessionRow] // new sessions, their end folded in
	ends     []stampRow        // ends of earlier sessions
	keys     keyed[keyRow]     // new keys, their revocation folded in
	revokes  []stampRow        // revocations of earlier keys
	limits   keyed[limitsRow]  // limits of earlier keys, the last per key
	budgets  keyed[budgetRow]  // budgets of earlier accounts, the last per account
}

// keyLimitsSet sets a key's limits: folded into a key of the batch, or
// the last of the batch for an earlier key.
func (b *batch) keyLimitsSet(v *account.KeyLimitsSet, pos int64) {
	l := limitsRow{id: v.KeyID, budget: v.MaxBudgetMicroUSD, period: string(v.BudgetPeriod), rpm: v.RPMLimit, tpm: v.TPMLimit,
		models: v.Models, expires: v.ExpiresAt, pos: pos}
	if l.models == nil {
		l.models = []string{}
	}
	if k := b.keys.get(v.KeyID); k != nil {
		k.limits, k.pos = l, pos
		return
	}
	if r := b.limits.get(v.KeyID); r != nil {
		*r = l
		return
	}
	b.limits.add(v.KeyID, l)
}

// accountBudgetSet sets an account's budget, the same way.
func (b *batch) accountBudgetSet(v *account.AccountBudgetSet, pos int64) {
	r := budgetRow{id: v.AccountID, budget: v.MaxBudgetMicroUSD, period: string(v.BudgetPeriod), pos: pos}
	if a := b.accounts.get(v.AccountID); a != nil {
		a.budget, a.budgetPeriod, a.pos = r.budget, r.period, pos
		return
	}
	if old := b.budgets.get(v.AccountID); old != nil {
		*old = r
		return
	}
	b.budgets.add(v.AccountID, r)
}

func (b *batch) accountCreated(v *account.AccountCreated, pos int64) {
	b.accounts.add(v.AccountID, accountRow{id: v.AccountID, email: v.Email, plan: string(v.Plan), createdAt: v.CreatedAt, pos: pos})
}

// planChanged sets the plan; a change without a Stripe customer keeps the
// one known.
func (b *batch) planChanged(v *account.PlanChanged, pos int64) {
	customer := optional(v.StripeCustomerID)
	if a := b.accounts.get(v.AccountID); a != nil {
		changed := v.ChangedAt
		a.plan, a.changedAt, a.pos = string(v.To), &changed, pos
		if customer != nil {
			a.customer = customer
		}
		return
	}
	if p := b.plans.get(v.AccountID); p != nil {
		p.plan, p.at, p.pos = string(v.To), v.ChangedAt, pos
		if customer != nil {
			p.customer = customer
		}
		return
	}
	b.plans.add(v.AccountID, planRow{id: v.AccountID, plan: string(v.To), customer: customer, at: v.ChangedAt, pos: pos})
}

func (b *batch) sessionStarted(v *signin.SessionStarted, pos int64) {
	b.sessions.add(v.SessionID, sessionRow{id: v.SessionID, accountID: v.AccountID, service: v.Service, tokenHash: v.TokenHash,
		startedAt: v.StartedAt, expiresAt: v.ExpiresAt, pos: pos})
}

// sessionEnded ends a session of the batch (the last end wins) or of an
// earlier one (only if it has not ended).
func (b *batch) sessionEnded(v *signin.SessionEnded, pos int64) {
	if s := b.sessions.get(v.SessionID); s != nil {
		ended := v.EndedAt
		s.endedAt, s.pos = &ended, pos
		return
	}
	b.ends = append(b.ends, stampRow{id: v.SessionID, at: v.EndedAt, pos: pos})
}

func (b *batch) keyIssued(v *account.KeyIssued, pos int64) {
	b.keys.add(v.KeyID, keyRow{id: v.KeyID, accountID: v.AccountID, service: string(v.Service), prefix: v.Prefix, hint: v.Hint,
		secretHash: v.SecretHash, name: v.Name, issuedAt: v.IssuedAt, limits: limitsRow{models: []string{}}, pos: pos})
}

// keyRevoked revokes a key: the first revocation of a key counts.
func (b *batch) keyRevoked(v *account.KeyRevoked, pos int64) {
	if k := b.keys.get(v.KeyID); k != nil {
		if k.revokedAt == nil {
			revoked := v.RevokedAt
			k.revokedAt, k.pos = &revoked, pos
		}
		return
	}
	b.revokes = append(b.revokes, stampRow{id: v.KeyID, at: v.RevokedAt, pos: pos})
}

// keyed is rows in the order they were added, found by id, so that a
// later event of the batch can fold into the row of the same id.
type keyed[R any] struct {
	rows  []R
	index map[uuid.UUID]int
}

// add appends r as the row of id.
func (k *keyed[R]) add(id uuid.UUID, r R) {
	if k.index == nil {
		k.index = map[uuid.UUID]int{}
	}
	k.index[id] = len(k.rows)
	k.rows = append(k.rows, r)
}

// get is the row of id, to change in place before the next add, or nil.
func (k *keyed[R]) get(id uuid.UUID) *R {
	i, ok := k.index[id]
	if !ok {
		return nil
	}
	return &k.rows[i]
}

// optional is s, or nil when it is empty (NULL in the read model).
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
