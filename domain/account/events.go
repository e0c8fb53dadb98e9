package account

import (
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
)

// AccountCreated: a customer account came into being.
type AccountCreated struct {
	AccountID uuid.UUID `json:"account_id"`
	Email     string    `json:"email"`
	Plan      Plan      `json:"plan"`
	CreatedAt time.Time `json:"created_at"`
}

func (AccountCreated) EventType() string  { return "AccountCreated" }
func (AccountCreated) SchemaVersion() int { return 1 }

// KeyIssued: an API key was minted for one service. Only the SHA-256 of the
// secret is recorded; the secret itself is shown to the caller once and
// never stored.
type KeyIssued struct {
	AccountID  uuid.UUID `json:"account_id"`
	KeyID      uuid.UUID `json:"key_id"`
	Service    Service   `json:"service"`
	Prefix     string    `json:"prefix"`
	Hint       string    `json:"hint"`
	SecretHash string    `json:"secret_hash"`
	Name       string    `json:"name,omitempty"`
	IssuedAt   time.Time `json:"issued_at"`
}

func (KeyIssued) EventType() string  { return "KeyIssued" }
func (KeyIssued) SchemaVersion() int { return 1 }

// KeyRevoked: a key stopped working for good.
type KeyRevoked struct {
	AccountID uuid.UUID `json:"account_id"`
	KeyID     uuid.UUID `json:"key_id"`
	RevokedAt time.Time `json:"revoked_at"`
}

func (KeyRevoked) EventType() string  { return "KeyRevoked" }
func (KeyRevoked) SchemaVersion() int { return 1 }

// Events lists constructors for every event of this package, for a
// domain.Registry.
func Events() []func() domain.Event {
	return []func() domain.Event{
		func() domain.Event { return &AccountCreated{} },
		func() domain.Event { return &KeyIssued{} },
		func() domain.Event { return &KeyRevoked{} },
		func() domain.Event { return &PlanChanged{} },
	}
}

// PlanChanged: the account moved to another plan. Reference names what
// caused it (a Stripe event id, an operator command) so that a replayed
// cause changes nothing twice.
type PlanChanged struct {
	AccountID            uuid.UUID `json:"account_id"`
	From                 Plan      `json:"from"`
	To                   Plan      `json:"to"`
	Source               string    `json:"source"`
	Reference            string    `json:"reference"`
	StripeCustomerID     string    `json:"stripe_customer_id,omitempty"`
	StripeSubscriptionID string    `json:"stripe_subscription_id,omitempty"`
	ChangedAt            time.Time `json:"changed_at"`
}

func (PlanChanged) EventType() string  { return "PlanChanged" }
func (PlanChanged) SchemaVersion() int { return 1 }
