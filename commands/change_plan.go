package commands

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore"
)

// ChangePlan moves an account to another plan (from a Stripe webhook or an
// operator). The same Reference twice changes nothing.
type ChangePlan struct {
	AccountID uuid.UUID
	Change    account.PlanChange
	Metadata  eventstore.Metadata
}

// ChangePlanHandler handles ChangePlan.
type ChangePlanHandler struct {
	accounts *accountRepo
	clock    Clock
}

// NewChangePlanHandler refuses nil dependencies.
func NewChangePlanHandler(store Appender, clock Clock) (*ChangePlanHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("change plan: nil dependency")
	}
	return &ChangePlanHandler{accounts: &accountRepo{store: store}, clock: clock}, nil
}

// Handle changes the plan; it returns the position of PlanChanged, or 0 when
// nothing changed.
func (h *ChangePlanHandler) Handle(ctx context.Context, c ChangePlan) (uint64, error) {
	return h.accounts.update(ctx, c.AccountID, c.Metadata, func(a *account.Account) ([]domain.Event, error) {
		return a.ChangePlan(c.Change, h.clock())
	})
}
