package account

import (
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/guardrail"
)

// Guardrails returns the account's own guardrails (nil: none).
func (a *Account) Guardrails() *guardrail.Policy { return a.guardrails }

func (a *Account) applyGuardrails(e *GuardrailsSet) {
	if e.KeyID == nil {
		a.guardrails = e.Policy
		return
	}
	for i := range a.keys {
		if a.keys[i].ID == *e.KeyID {
			a.keys[i].Guardrails = e.Policy
		}
	}
}

// SetGuardrails decides the guardrails of the account (keyID uuid.Nil) or
// of one of its active gateway keys: p nil clears them (a key then follows
// the account's). The policy is normalized and checked (guardrail.Compile);
// the same guardrails again record nothing.
func (a *Account) SetGuardrails(keyID uuid.UUID, p *guardrail.Policy, now time.Time) ([]domain.Event, error) {
	if !a.created {
		return nil, domain.NotFound("account_not_found", "no such account")
	}
	if p != nil {
		n := p.Normalize()
		if _, err := guardrail.Compile(n); err != nil {
			return nil, err
		}
		p = &n
	}
	ev := &GuardrailsSet{AccountID: a.id, Policy: p, SetAt: now.UTC()}
	if keyID == uuid.Nil {
		if samePolicy(a.guardrails, p) {
			return nil, nil
		}
		return []domain.Event{ev}, nil
	}
	for _, k := range a.keys {
		if k.ID != keyID {
			continue
		}
		if k.Revoked {
			return nil, domain.Conflict("key_revoked", "key %s is revoked; its guardrails cannot change", keyID)
		}
		if k.Service != Gateway {
			return nil, domain.Invalid("guardrails_gateway_only", "service", "only gateway keys carry guardrails; %s is a %s key", keyID, k.Service)
		}
		if samePolicy(k.Guardrails, p) {
			return nil, nil
		}
		id := keyID
		ev.KeyID = &id
		return []domain.Event{ev}, nil
	}
	return nil, domain.NotFound("key_not_found", "no key %s on this account", keyID)
}

func samePolicy(a, b *guardrail.Policy) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Equal(*b))
}
