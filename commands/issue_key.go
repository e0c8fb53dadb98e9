package commands

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore"
)

// IssueKey mints an API key for one service of an account.
type IssueKey struct {
	AccountID uuid.UUID
	Service   account.Service
	Name      string
	// Limits are a gateway key's limits (zero: none); KnownModel says
	// whether a name they list is a tier or a model id (nil: any).
	Limits     account.KeyLimits
	KnownModel func(string) bool
	Metadata   eventstore.Metadata
}

// IssuedKey is the result of IssueKey. Secret is the only copy of the key in
// plain text: show it once and drop it.
type IssuedKey struct {
	KeyID     uuid.UUID
	AccountID uuid.UUID
	Service   account.Service
	Prefix    string
	Hint      string
	Name      string
	Secret    string
	CreatedAt time.Time
	Limits    account.KeyLimits
	Position  uint64
}

// IssueKeyHandler handles IssueKey. The per-service active-key limit holds
// under concurrent mints: each mint appends at the version it decided on, so
// of two racing mints that would both pass the limit only one lands and the
// other decides again.
type IssueKeyHandler struct {
	accounts *accountRepo
	clock    Clock
}

// NewIssueKeyHandler refuses nil dependencies.
func NewIssueKeyHandler(store Appender, clock Clock) (*IssueKeyHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("issue key: nil dependency")
	}
	return &IssueKeyHandler{accounts: &accountRepo{store: store}, clock: clock}, nil
}

// Handle mints the key.
func (h *IssueKeyHandler) Handle(ctx context.Context, c IssueKey) (IssuedKey, error) {
	secret, err := account.NewSecret(c.Service)
	if err != nil {
		return IssuedKey{}, domain.Invalid("invalid_service", "service", "service must be one of answer, gateway, records; got %q", c.Service)
	}
	keyID := uuid.New()
	now := h.clock().UTC()
	pos, err := h.accounts.update(ctx, c.AccountID, c.Metadata, func(a *account.Account) ([]domain.Event, error) {
		return a.IssueLimitedKey(keyID, c.Service, secret, c.Name, c.Limits, c.KnownModel, now)
	})
	if err != nil {
		return IssuedKey{}, err
	}
	return IssuedKey{
		KeyID: keyID, AccountID: c.AccountID, Service: c.Service, Prefix: c.Service.KeyPrefix(),
		Hint: secret.Hint, Name: c.Name, Secret: secret.Plain, CreatedAt: now, Limits: c.Limits, Position: pos,
	}, nil
}
