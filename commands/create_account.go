package commands

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore"
)

// CreateAccount opens an account for an e-mail address.
type CreateAccount struct {
	Email    string
	Plan     string
	Metadata eventstore.Metadata
}

// AccountCreatedResult says which account was created and where its event
// landed.
type AccountCreatedResult struct {
	AccountID uuid.UUID
	Email     string
	Plan      account.Plan
	Position  uint64
}

// CreateAccountHandler handles CreateAccount. An address already in use is
// a domain conflict.
type CreateAccountHandler struct {
	accounts *accountRepo
	clock    Clock
}

// NewCreateAccountHandler refuses nil dependencies.
func NewCreateAccountHandler(store Appender, clock Clock) (*CreateAccountHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("create account: nil dependency")
	}
	return &CreateAccountHandler{accounts: &accountRepo{store: store}, clock: clock}, nil
}

// Handle creates the account.
func (h *CreateAccountHandler) Handle(ctx context.Context, c CreateAccount) (AccountCreatedResult, error) {
	email, err := account.NormalizeEmail(c.Email)
	if err != nil {
		return AccountCreatedResult{}, err
	}
	plan, err := account.ParsePlan(c.Plan)
	if err != nil {
		return AccountCreatedResult{}, err
	}
	id := account.IDForEmail(email)
	pos, err := h.accounts.update(ctx, id, c.Metadata, func(a *account.Account) ([]domain.Event, error) {
		return a.Create(email, plan, h.clock())
	})
	if errors.Is(err, domain.ErrConcurrency) {
		// Two creations raced and the other won: the address is taken.
		return AccountCreatedResult{}, domain.Conflict("account_exists", "an account for %s already exists", email)
	}
	if err != nil {
		return AccountCreatedResult{}, err
	}
	return AccountCreatedResult{AccountID: id, Email: email, Plan: plan, Position: pos}, nil
}
