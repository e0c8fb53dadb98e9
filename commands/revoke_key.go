package commands

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore"
)

// RevokeKey revokes one key of an account for good.
type RevokeKey struct {
	AccountID uuid.UUID
	KeyID     uuid.UUID
	Metadata  eventstore.Metadata
}

// RevokeKeyHandler handles RevokeKey. Revoking an already revoked key
// succeeds and appends nothing (Position 0).
type RevokeKeyHandler struct {
	accounts *accountRepo
	clock    Clock
}

// NewRevokeKeyHandler refuses nil dependencies.
func NewRevokeKeyHandler(store Appender, clock Clock) (*RevokeKeyHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("revoke key: nil dependency")
	}
	return &RevokeKeyHandler{accounts: &accountRepo{store: store}, clock: clock}, nil
}

// Handle revokes the key and returns the position of the KeyRevoked event.
func (h *RevokeKeyHandler) Handle(ctx context.Context, c RevokeKey) (uint64, error) {
	return h.accounts.update(ctx, c.AccountID, c.Metadata, func(a *account.Account) ([]domain.Event, error) {
		if !a.Exists() {
			return nil, domain.NotFound("key_not_found", "no key %s", c.KeyID)
		}
		return a.RevokeKey(c.KeyID, h.clock())
	})
}
