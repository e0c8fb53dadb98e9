package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/signin"
)

// SessionPrincipal is who a valid session cookie speaks for.
type SessionPrincipal struct {
	SessionID        uuid.UUID
	AccountID        uuid.UUID
	Email            string
	Plan             account.Plan
	Service          account.Service
	StripeCustomerID string
	ExpiresAt        time.Time
}

// SessionByToken maps a session token to its live session: not ended, not
// expired at now. Anything else is domain.ErrUnauthenticated.
func (q *Queries) SessionByToken(ctx context.Context, token string, now time.Time) (SessionPrincipal, error) {
	var p SessionPrincipal
	var customer *string
	var found bool
	blocked, err := q.lookup(ctx, nil, `
		SELECT s.session_id, s.account_id, a.email, a.plan, s.service, a.stripe_customer_id, s.expires_at
		FROM rm_identity.sessions s JOIN rm_identity.accounts a USING (account_id)
		WHERE s.token_hash = $1 AND s.ended_at IS NULL AND s.expires_at > $2`, []any{signin.HashToken(token), now}, func(row pgx.Row) error {
		err := row.Scan(&p.SessionID, &p.AccountID, &p.Email, &p.Plan, &p.Service, &customer, &p.ExpiresAt)
		found = err == nil
		return err
	})
	switch {
	case err != nil:
		return p, fmt.Errorf("looking up session: %w", err)
	case blocked:
		return p, errIdentityBlocked
	case !found:
		return p, &domain.Error{Kind: domain.ErrUnauthenticated, Code: "no_session", Message: "not signed in, or the session ended; sign in again"}
	}
	if customer != nil {
		p.StripeCustomerID = *customer
	}
	p.ExpiresAt = p.ExpiresAt.UTC()
	return p, nil
}

// AccountDetail is an account with its billing link.
type AccountDetail struct {
	AccountInfo
	StripeCustomerID string     `json:"-"`
	PlanChangedAt    *time.Time `json:"plan_changed_at"`
	// Budget is the account's own budget, shared by its keys.
	Budget account.Budget `json:"-"`
}

// Account returns one account by id.
func (q *Queries) Account(ctx context.Context, id uuid.UUID) (AccountDetail, error) {
	return q.account(ctx, `account_id = $1`, id)
}

// AccountByStripeCustomer finds the account billed as a Stripe customer.
func (q *Queries) AccountByStripeCustomer(ctx context.Context, customer string) (AccountDetail, error) {
	return q.account(ctx, `stripe_customer_id = $1`, customer)
}

func (q *Queries) account(ctx context.Context, where string, arg any) (AccountDetail, error) {
	var a AccountDetail
	var customer *string
	err := q.pool.QueryRow(ctx, `SELECT account_id, email, plan, created_at, stripe_customer_id, plan_changed_at, budget_micro_usd, budget_period
		FROM rm_identity.accounts WHERE `+where, arg).
		Scan(&a.ID, &a.Email, &a.Plan, &a.CreatedAt, &customer, &a.PlanChangedAt, &a.Budget.Max, &a.Budget.Period)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, domain.NotFound("account_not_found", "no such account")
	}
	if err != nil {
		return a, fmt.Errorf("finding account: %w", err)
	}
	if customer != nil {
		a.StripeCustomerID = *customer
	}
	a.CreatedAt = a.CreatedAt.UTC()
	return a, nil
}
