package app

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/projections/identity"
)

// Identities is the identity read model: accounts, keys and sessions, and
// the process's cache of principals (projections/identity).
type Identities interface {
	Authenticate(ctx context.Context, secret string, svc account.Service) (identity.Principal, error)
	SessionByToken(ctx context.Context, token string, now time.Time) (identity.SessionPrincipal, error)
	Account(ctx context.Context, id uuid.UUID) (identity.AccountDetail, error)
	AccountByEmail(ctx context.Context, email string) (identity.AccountInfo, error)
	AccountByStripeCustomer(ctx context.Context, customer string) (identity.AccountDetail, error)
	Key(ctx context.Context, id uuid.UUID) (identity.KeyInfo, error)
	Keys(ctx context.Context, accountID uuid.UUID) ([]identity.KeyInfo, error)
	// Forget drops the cached principals (after a write the caller waited
	// for); ListenForChanges keeps the cache in step with other processes.
	Forget()
	ListenForChanges(ctx context.Context, warn func(msg string, args ...any))
}

var _ Identities = (*identity.Queries)(nil)
