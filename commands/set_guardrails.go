package commands

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/netguard"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/guardrail"
	"github.com/arr-dev/arr/eventstore"
)

// SetGuardrails sets (or, with a nil Policy, clears) the guardrails of an
// account (KeyID uuid.Nil) or of one of its gateway keys.
type SetGuardrails struct {
	AccountID uuid.UUID
	KeyID     uuid.UUID
	Policy    *guardrail.Policy
	Metadata  eventstore.Metadata
}

// SetGuardrailsHandler handles SetGuardrails: a GuardrailsSet under the
// account's version, or nothing when the guardrails do not change. A
// webhook guardrail's URL is checked as a monitor's is (the SSRF guard,
// unless private webhooks are allowed); its secret's nonce is kept while
// the URL stays the same and made anew when it changes.
type SetGuardrailsHandler struct {
	accounts     *accountRepo
	clock        Clock
	allowPrivate bool
	guard        *netguard.Guard
}

// NewSetGuardrailsHandler refuses nil dependencies.
func NewSetGuardrailsHandler(store Appender, clock Clock, allowPrivate bool) (*SetGuardrailsHandler, error) {
	if store == nil || clock == nil {
		return nil, errors.New("set guardrails: nil dependency")
	}
	return &SetGuardrailsHandler{accounts: &accountRepo{store: store}, clock: clock, allowPrivate: allowPrivate,
		guard: netguard.New(netguard.Config{})}, nil
}

// Handle sets the guardrails and returns the event's position (0: no
// change).
func (h *SetGuardrailsHandler) Handle(ctx context.Context, c SetGuardrails) (uint64, error) {
	var p *guardrail.Policy
	if c.Policy != nil {
		n := c.Policy.Normalize()
		p = &n
		if p.Webhook != nil {
			u, err := checkWebhookURL(h.guard, h.allowPrivate, p.Webhook.URL)
			if err != nil {
				return 0, err
			}
			p.Webhook.URL = u
		}
	}
	return h.accounts.update(ctx, c.AccountID, c.Metadata, func(a *account.Account) ([]domain.Event, error) {
		if err := keepNonce(p, current(a, c.KeyID)); err != nil {
			return nil, err
		}
		return a.SetGuardrails(c.KeyID, p, h.clock())
	})
}

// current is the account's or the key's guardrails as they are.
func current(a *account.Account, keyID uuid.UUID) *guardrail.Policy {
	if keyID == uuid.Nil {
		return a.Guardrails()
	}
	for _, k := range a.Keys() {
		if k.ID == keyID {
			return k.Guardrails
		}
	}
	return nil
}

// keepNonce gives p's webhook the nonce of old's when the URL is the same,
// else a new one.
func keepNonce(p, old *guardrail.Policy) error {
	if p == nil || p.Webhook == nil {
		return nil
	}
	if old != nil && old.Webhook != nil && old.Webhook.URL == p.Webhook.URL && old.Webhook.SecretNonce != "" {
		p.Webhook.SecretNonce = old.Webhook.SecretNonce
		return nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	p.Webhook.SecretNonce = hex.EncodeToString(b)
	return nil
}
