package account

import (
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/guardrail"
	"github.com/arr-dev/arr/domain/text"
)

// IDForEmail is the account id that belongs to a normalized e-mail address:
// a name-based UUID of its mailto: URL, so that "one account per address" is
// enforced by the event store's no-stream expectation.
func IDForEmail(email string) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("mailto:"+email))
}

// StreamID is the event stream that holds one account's events.
func StreamID(id uuid.UUID) string { return "account-" + id.String() }

// NormalizeEmail trims, lowercases and validates an address.
func NormalizeEmail(s string) (string, error) {
	if err := text.Check("email", s, 254); err != nil {
		return "", err
	}
	e := strings.ToLower(strings.TrimSpace(s))
	if e == "" {
		return "", domain.Invalid("email_required", "email", "an e-mail address is required")
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || len(e) > 254 || !strings.Contains(e[strings.LastIndex(e, "@")+1:], ".") {
		return "", domain.Invalid("invalid_email", "email", "%q is not a valid e-mail address (expected name@example.com)", s)
	}
	return e, nil
}

// MaxKeyNameChars bounds a key's name, in characters.
const MaxKeyNameChars = 100

// Key is one API key as the aggregate remembers it.
type Key struct {
	ID       uuid.UUID
	Service  Service
	Prefix   string
	Hint     string
	Name     string
	IssuedAt time.Time
	Revoked  bool
	Limits   KeyLimits
	// Guardrails are the key's own (nil: its account's apply).
	Guardrails *guardrail.Policy
}

// Account is the aggregate. Its state is rebuilt from its events by Apply;
// its decisions return new events or a domain error and change nothing.
type Account struct {
	id      uuid.UUID
	email   string
	plan    Plan
	created bool
	keys    []Key
	version int64 // number of events applied; -1 before any
	// references of the PlanChanged events applied, for idempotency
	planRefs         map[string]bool
	stripeCustomerID string
	budget           Budget
	// guardrails are the account's (nil: none); a key's own are in its
	// Key.
	guardrails *guardrail.Policy
}

// New returns an empty aggregate for id, ready to have its history applied.
func New(id uuid.UUID) *Account { return &Account{id: id, version: -1} }

// ID returns the account id.
func (a *Account) ID() uuid.UUID { return a.id }

// Email returns the normalized e-mail address.
func (a *Account) Email() string { return a.email }

// Plan returns the current plan.
func (a *Account) Plan() Plan { return a.plan }

// Exists reports whether the account has been created.
func (a *Account) Exists() bool { return a.created }

// Version is the stream version of the last applied event, or -1.
func (a *Account) Version() int64 { return a.version }

// Keys returns a copy of the account's keys, oldest first.
func (a *Account) Keys() []Key { return append([]Key(nil), a.keys...) }

// Apply folds one event into the state. Unknown events are ignored so that
// newer builds' events do not break older readers.
func (a *Account) Apply(e domain.Event) {
	a.version++
	switch e := e.(type) {
	case *AccountCreated:
		a.created, a.email, a.plan = true, e.Email, e.Plan
	case *KeyIssued:
		a.keys = append(a.keys, Key{ID: e.KeyID, Service: e.Service, Prefix: e.Prefix, Hint: e.Hint, Name: e.Name, IssuedAt: e.IssuedAt})
	case *KeyRevoked:
		for i := range a.keys {
			if a.keys[i].ID == e.KeyID {
				a.keys[i].Revoked = true
			}
		}
	case *KeyLimitsSet:
		for i := range a.keys {
			if a.keys[i].ID == e.KeyID {
				a.keys[i].Limits = e.Limits()
			}
		}
	case *AccountBudgetSet:
		a.budget = Budget{Max: MicroUSD(e.MaxBudgetMicroUSD), Period: e.BudgetPeriod}
	case *GuardrailsSet:
		a.applyGuardrails(e)
	case *PlanChanged:
		a.plan = e.To
		if a.planRefs == nil {
			a.planRefs = map[string]bool{}
		}
		a.planRefs[e.Reference] = true
		if e.StripeCustomerID != "" {
			a.stripeCustomerID = e.StripeCustomerID
		}
	}
}

// StripeCustomerID is the account's customer at Stripe, once it has one.
func (a *Account) StripeCustomerID() string { return a.stripeCustomerID }

// PlanChange is a request to move an account to another plan.
type PlanChange struct {
	To                   Plan
	Source               string // "stripe" or "operator"
	Reference            string // what caused it; the same reference twice changes nothing
	StripeCustomerID     string
	StripeSubscriptionID string
}

// ChangePlan decides a plan change. A cause already applied (same
// Reference) records nothing, so replayed webhooks are harmless; moving to
// the current plan records nothing unless it brings a new Stripe customer.
func (a *Account) ChangePlan(c PlanChange, now time.Time) ([]domain.Event, error) {
	if !a.created {
		return nil, domain.NotFound("account_not_found", "no such account")
	}
	if c.To.Rank() < 0 {
		return nil, domain.Invalid("invalid_plan", "plan", "unknown plan %q", c.To)
	}
	if c.Reference == "" {
		return nil, domain.Invalid("reference_required", "reference", "a plan change needs the reference of its cause")
	}
	for _, f := range []struct{ name, v string }{{"source", c.Source}, {"reference", c.Reference},
		{"stripe_customer_id", c.StripeCustomerID}, {"stripe_subscription_id", c.StripeSubscriptionID}} {
		if err := text.Check(f.name, f.v, 255); err != nil {
			return nil, err
		}
	}
	if a.planRefs[c.Reference] {
		return nil, nil
	}
	if c.To == a.plan && (c.StripeCustomerID == "" || c.StripeCustomerID == a.stripeCustomerID) {
		return nil, nil
	}
	return []domain.Event{&PlanChanged{AccountID: a.id, From: a.plan, To: c.To, Source: c.Source, Reference: c.Reference,
		StripeCustomerID: c.StripeCustomerID, StripeSubscriptionID: c.StripeSubscriptionID, ChangedAt: now.UTC()}}, nil
}

// Create decides the creation of an account.
func (a *Account) Create(email string, plan Plan, now time.Time) ([]domain.Event, error) {
	if a.created {
		return nil, domain.Conflict("account_exists", "an account for %s already exists", a.email)
	}
	return []domain.Event{&AccountCreated{AccountID: a.id, Email: email, Plan: plan, CreatedAt: now.UTC()}}, nil
}

// ActiveKeys counts unrevoked keys for a service.
func (a *Account) ActiveKeys(s Service) int {
	n := 0
	for _, k := range a.keys {
		if k.Service == s && !k.Revoked {
			n++
		}
	}
	return n
}

// IssueKey decides the minting of a key whose secret has already been
// generated (only its hash and hint reach the event).
func (a *Account) IssueKey(keyID uuid.UUID, s Service, secret Secret, name string, now time.Time) ([]domain.Event, error) {
	if !a.created {
		return nil, domain.NotFound("account_not_found", "no such account")
	}
	if s.KeyPrefix() == "" {
		return nil, domain.Invalid("invalid_service", "service", "unknown service %q", s)
	}
	if err := text.Check("name", name, MaxKeyNameChars); err != nil {
		return nil, err
	}
	if n, max := a.ActiveKeys(s), s.MaxActiveKeys(); n >= max {
		return nil, domain.Conflict("key_limit_reached",
			"this account already has %d active %s keys, the most allowed; revoke one before minting another", n, s)
	}
	return []domain.Event{&KeyIssued{
		AccountID: a.id, KeyID: keyID, Service: s, Prefix: s.KeyPrefix(), Hint: secret.Hint,
		SecretHash: secret.Hash, Name: name, IssuedAt: now.UTC(),
	}}, nil
}

// RevokeKey decides the revocation of one of the account's keys. Revoking a
// key twice is not an error and records nothing the second time.
func (a *Account) RevokeKey(keyID uuid.UUID, now time.Time) ([]domain.Event, error) {
	for _, k := range a.keys {
		if k.ID != keyID {
			continue
		}
		if k.Revoked {
			return nil, nil
		}
		return []domain.Event{&KeyRevoked{AccountID: a.id, KeyID: keyID, RevokedAt: now.UTC()}}, nil
	}
	return nil, domain.NotFound("key_not_found", "no key %s on this account", keyID)
}

// String is for logs; it carries no secret.
func (a *Account) String() string { return fmt.Sprintf("account %s (%s, %s)", a.id, a.email, a.plan) }
