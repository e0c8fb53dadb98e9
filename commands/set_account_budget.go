package commands

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore"
)

// SetAccountBudget sets (or, with 0, clears) the budget an account's keys
// share.
type SetAccountBudget struct {
	AccountID uuid.UUID
	Budget    account.Budget
	Metadata  eventstore.Metadata
}

// SetAccountBudgetHandler handles SetAccountBudget.
type SetAccountBudgetHandler struct {
	accounts *accountRepo
	clock    Clock
}

// NewSetAccountBudgetHandler refuses nil dependencies.
func NewSetAccountBudgetHandler(store Appender, clock Clock) (*SetAccountBudgetHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("set account budget: nil dependency")
	}
	return &SetAccountBudgetHandler{accounts: &accountRepo{store: store}, clock: clock}, nil
}

// Handle sets the budget and returns the event's position (0: no change).
func (h *SetAccountBudgetHandler) Handle(ctx context.Context, c SetAccountBudget) (uint64, error) {
	return h.accounts.update(ctx, c.AccountID, c.Metadata, func(a *account.Account) ([]domain.Event, error) {
		return a.SetBudget(c.Budget, h.clock())
	})
}
