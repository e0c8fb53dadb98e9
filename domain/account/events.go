package account

import (
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/guardrail"
)

// AccountCreated: a customer account came into being.
type AccountCreated struct {
	// AccountID identifies the account; its stream is account-{AccountID}.
	AccountID uuid.UUID `json:"account_id"`
	// Email is the account's address, as the customer signs in with it.
	Email string `json:"email"`
	// Plan is the plan the account starts on.
	Plan Plan `json:"plan"`
	// CreatedAt is when the account was created (UTC).
	CreatedAt time.Time `json:"created_at"`
}

func (AccountCreated) EventType() string  { return "AccountCreated" }
func (AccountCreated) SchemaVersion() int { return 1 }

// KeyIssued: an API key was minted for one service. Only the SHA-256 of the
// secret is recorded; the secret itself is shown to the caller once and
// never stored.
type KeyIssued struct {
	// AccountID is the account that owns the key.
	AccountID uuid.UUID `json:"account_id"`
	// KeyID identifies the key (revocations and usage name it).
	KeyID uuid.UUID `json:"key_id"`
	// Service is the one service the key works for.
	Service Service `json:"service"`
	// Prefix is the start every key of the service shares (arr_gw_,
	// arr_ans_, arr_rec_).
	Prefix string `json:"prefix"`
	// Hint is the secret's last 4 characters, shown to tell keys apart.
	Hint string `json:"hint"`
	// SecretHash is the lowercase hex SHA-256 of the whole secret: how a
	// presented key is recognized without storing it.
	SecretHash string `json:"secret_hash"`
	// Name is the label the customer gave the key, if any.
	Name string `json:"name,omitempty"`
	// IssuedAt is when the key was minted (UTC).
	IssuedAt time.Time `json:"issued_at"`
}

func (KeyIssued) EventType() string  { return "KeyIssued" }
func (KeyIssued) SchemaVersion() int { return 1 }

// KeyRevoked: a key stopped working for good.
type KeyRevoked struct {
	// AccountID is the account that owned the key.
	AccountID uuid.UUID `json:"account_id"`
	// KeyID is the revoked key (as in its KeyIssued).
	KeyID uuid.UUID `json:"key_id"`
	// RevokedAt is when the key stopped working (UTC).
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
		func() domain.Event { return &KeyLimitsSet{} },
		func() domain.Event { return &AccountBudgetSet{} },
		func() domain.Event { return &GuardrailsSet{} },
	}
}

// PlanChanged: the account moved to another plan. Reference names what
// caused it (a Stripe event id, an operator command) so that a replayed
// cause changes nothing twice.
type PlanChanged struct {
	// AccountID is the account whose plan changed.
	AccountID uuid.UUID `json:"account_id"`
	// From is the plan the account was on.
	From Plan `json:"from"`
	// To is the plan the account is on from now.
	To Plan `json:"to"`
	// Source says what changed it: "stripe" for a Stripe webhook, or the
	// operator tool that did.
	Source string `json:"source"`
	// Reference is the cause's own id (a Stripe event id for "stripe"):
	// the same reference twice changes nothing.
	Reference string `json:"reference"`
	// StripeCustomerID is the Stripe customer paying for the plan, when
	// Stripe caused the change.
	StripeCustomerID string `json:"stripe_customer_id,omitempty"`
	// StripeSubscriptionID is the Stripe subscription behind the plan,
	// when Stripe caused the change.
	StripeSubscriptionID string `json:"stripe_subscription_id,omitempty"`
	// ChangedAt is when the change was recorded (UTC).
	ChangedAt time.Time `json:"changed_at"`
}

func (PlanChanged) EventType() string  { return "PlanChanged" }
func (PlanChanged) SchemaVersion() int { return 1 }

// KeyLimitsSet: a gateway key's limits were set, at issue time or later.
// The event holds all of the key's limits from then on (a limit left out
// is none), so the latest one is the key's limits.
type KeyLimitsSet struct {
	// AccountID is the account that owns the key.
	AccountID uuid.UUID `json:"account_id"`
	// KeyID is the key (as in its KeyIssued).
	KeyID uuid.UUID `json:"key_id"`
	// MaxBudgetMicroUSD is the key's budget per period in micro-dollars
	// (0: none).
	MaxBudgetMicroUSD int64 `json:"max_budget_micro_usd"`
	// BudgetPeriod is day, week or month (UTC calendar periods) or total;
	// empty without a budget.
	BudgetPeriod Period `json:"budget_period,omitempty"`
	// RPMLimit is requests per UTC clock minute (0: none).
	RPMLimit int64 `json:"rpm_limit"`
	// TPMLimit is tokens (prompt plus completion) per UTC clock minute (0:
	// none).
	TPMLimit int64 `json:"tpm_limit"`
	// Models are the tiers and model ids the key may use (empty: all).
	Models []string `json:"models,omitempty"`
	// ExpiresAt is when the key stops working (UTC), if it does.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// SetAt is when the limits were set (UTC).
	SetAt time.Time `json:"set_at"`
}

func (KeyLimitsSet) EventType() string  { return "KeyLimitsSet" }
func (KeyLimitsSet) SchemaVersion() int { return 1 }

// Limits are the limits the event sets.
func (e *KeyLimitsSet) Limits() KeyLimits {
	return KeyLimits{MaxBudget: MicroUSD(e.MaxBudgetMicroUSD), Period: e.BudgetPeriod, RPM: e.RPMLimit, TPM: e.TPMLimit,
		Models: e.Models, ExpiresAt: e.ExpiresAt}
}

// AccountBudgetSet: an account's budget, shared by all its keys, was set
// or cleared.
type AccountBudgetSet struct {
	// AccountID is the account.
	AccountID uuid.UUID `json:"account_id"`
	// MaxBudgetMicroUSD is the budget per period in micro-dollars (0:
	// none).
	MaxBudgetMicroUSD int64 `json:"max_budget_micro_usd"`
	// BudgetPeriod is day, week, month or total; empty without a budget.
	BudgetPeriod Period `json:"budget_period,omitempty"`
	// SetAt is when the budget was set (UTC).
	SetAt time.Time `json:"set_at"`
}

func (AccountBudgetSet) EventType() string  { return "AccountBudgetSet" }
func (AccountBudgetSet) SchemaVersion() int { return 1 }

// GuardrailsSet: an account's guardrails, or one gateway key's own, were
// set or cleared. A key's own guardrails replace its account's whole; a
// key without (its Policy cleared) follows its account's. The event holds
// the policy (rules, deny patterns, the webhook's URL and the nonce its
// signing secret is derived from), never any prompt text nor a secret.
type GuardrailsSet struct {
	// AccountID is the account.
	AccountID uuid.UUID `json:"account_id"`
	// KeyID is the key whose own guardrails these are; absent for the
	// account's.
	KeyID *uuid.UUID `json:"key_id,omitempty"`
	// Policy is the guardrails from now on; absent: none (for a key: it
	// follows the account's again).
	Policy *guardrail.Policy `json:"policy,omitempty"`
	// SetAt is when the guardrails were set (UTC).
	SetAt time.Time `json:"set_at"`
}

func (GuardrailsSet) EventType() string  { return "GuardrailsSet" }
func (GuardrailsSet) SchemaVersion() int { return 1 }
