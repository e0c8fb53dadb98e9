package account

import (
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
)

// Budget returns the account's own budget (zero: none).
func (a *Account) Budget() Budget { return a.budget }

// limitsSet is the event that sets key's limits to l.
func (a *Account) limitsSet(keyID uuid.UUID, l KeyLimits, now time.Time) *KeyLimitsSet {
	return &KeyLimitsSet{AccountID: a.id, KeyID: keyID, MaxBudgetMicroUSD: int64(l.MaxBudget), BudgetPeriod: l.Period,
		RPMLimit: l.RPM, TPMLimit: l.TPM, Models: l.Models, ExpiresAt: l.ExpiresAt, SetAt: now.UTC()}
}

// IssueLimitedKey decides the minting of a key with limits: KeyIssued,
// then KeyLimitsSet when the limits limit anything. Only gateway keys
// carry limits. known says whether a model name is a tier or a model id.
func (a *Account) IssueLimitedKey(keyID uuid.UUID, s Service, secret Secret, name string, l KeyLimits, known func(string) bool, now time.Time) ([]domain.Event, error) {
	evs, err := a.IssueKey(keyID, s, secret, name, now)
	if err != nil || l.IsZero() {
		return evs, err
	}
	if s != Gateway {
		return nil, domain.Invalid("limits_gateway_only", "service", "only gateway keys carry limits; %s keys are limited by the plan", s)
	}
	if err := l.Validate(known); err != nil {
		return nil, err
	}
	return append(evs, a.limitsSet(keyID, l, now)), nil
}

// ChangeKeyLimits decides a change of an active gateway key's limits;
// limits that end up as they were record nothing.
func (a *Account) ChangeKeyLimits(keyID uuid.UUID, c LimitsChange, known func(string) bool, now time.Time) ([]domain.Event, error) {
	for _, k := range a.keys {
		if k.ID != keyID {
			continue
		}
		if k.Revoked {
			return nil, domain.Conflict("key_revoked", "key %s is revoked; its limits cannot change", keyID)
		}
		if k.Service != Gateway {
			return nil, domain.Invalid("limits_gateway_only", "service", "only gateway keys carry limits; %s is a %s key", keyID, k.Service)
		}
		l := c.Apply(k.Limits)
		if err := l.Validate(known); err != nil {
			return nil, err
		}
		if l.Equal(k.Limits) {
			return nil, nil
		}
		return []domain.Event{a.limitsSet(keyID, l, now)}, nil
	}
	return nil, domain.NotFound("key_not_found", "no key %s on this account", keyID)
}

// SetBudget decides the account's shared budget; the same budget again
// records nothing.
func (a *Account) SetBudget(b Budget, now time.Time) ([]domain.Event, error) {
	if !a.created {
		return nil, domain.NotFound("account_not_found", "no such account")
	}
	if b.Max == 0 {
		b.Period = ""
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if b == a.budget {
		return nil, nil
	}
	return []domain.Event{&AccountBudgetSet{AccountID: a.id, MaxBudgetMicroUSD: int64(b.Max), BudgetPeriod: b.Period, SetAt: now.UTC()}}, nil
}
