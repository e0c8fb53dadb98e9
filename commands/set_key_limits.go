package commands

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore"
)

// SetKeyLimits changes some of a gateway key's limits and keeps the rest.
type SetKeyLimits struct {
	AccountID uuid.UUID
	KeyID     uuid.UUID
	Change    account.LimitsChange
	// KnownModel says whether a listed name is a tier or a model id (nil:
	// any).
	KnownModel func(string) bool
	Metadata   eventstore.Metadata
}

// SetKeyLimitsHandler handles SetKeyLimits: a KeyLimitsSet with the key's
// limits after the change, appended under the account's version, or
// nothing when they do not change.
type SetKeyLimitsHandler struct {
	accounts *accountRepo
	clock    Clock
}

// NewSetKeyLimitsHandler refuses nil dependencies.
func NewSetKeyLimitsHandler(store Appender, clock Clock) (*SetKeyLimitsHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("set key limits: nil dependency")
	}
	return &SetKeyLimitsHandler{accounts: &accountRepo{store: store}, clock: clock}, nil
}

// Handle changes the limits and returns the event's position (0: no
// change).
func (h *SetKeyLimitsHandler) Handle(ctx context.Context, c SetKeyLimits) (uint64, error) {
	return h.accounts.update(ctx, c.AccountID, c.Metadata, func(a *account.Account) ([]domain.Event, error) {
		if !a.Exists() {
			return nil, domain.NotFound("key_not_found", "no key %s", c.KeyID)
		}
		return a.ChangeKeyLimits(c.KeyID, c.Change, c.KnownModel, h.clock())
	})
}
