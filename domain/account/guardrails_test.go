package account

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/guardrail"
)

func TestSetGuardrails(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	a := New(uuid.New())
	for _, e := range must(a.Create("g@example.com", Enterprise, now)) {
		a.Apply(e)
	}
	gw, ans := uuid.New(), uuid.New()
	for _, k := range []struct {
		id uuid.UUID
		s  Service
	}{{gw, Gateway}, {ans, Answer}} {
		for _, e := range must(a.IssueKey(k.id, k.s, Secret{Hash: "h", Hint: "abcd"}, "", now)) {
			a.Apply(e)
		}
	}
	p := &guardrail.Policy{PII: []guardrail.PIIRule{{Type: guardrail.Email, Action: guardrail.Redact}}}
	evs := must(a.SetGuardrails(uuid.Nil, p, now))
	if len(evs) != 1 || evs[0].(*GuardrailsSet).KeyID != nil || evs[0].(*GuardrailsSet).Policy.PII[0].On != guardrail.OnPrompt {
		t.Fatalf("account's: %+v", evs)
	}
	a.Apply(evs[0])
	if evs := must(a.SetGuardrails(uuid.Nil, p, now)); len(evs) != 0 {
		t.Fatal("the same policy again recorded an event")
	}
	evs = must(a.SetGuardrails(gw, &guardrail.Policy{}, now))
	if len(evs) != 1 || *evs[0].(*GuardrailsSet).KeyID != gw {
		t.Fatalf("key's: %+v", evs)
	}
	a.Apply(evs[0])
	if a.Keys()[0].Guardrails == nil || a.Guardrails() == nil {
		t.Fatal("state not applied")
	}
	if _, err := a.SetGuardrails(ans, p, now); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("an answer key: %v", err)
	}
	if _, err := a.SetGuardrails(uuid.New(), p, now); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("an unknown key: %v", err)
	}
	if _, err := a.SetGuardrails(uuid.Nil, &guardrail.Policy{Deny: []guardrail.DenyRule{{Pattern: "("}}}, now); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("a bad pattern: %v", err)
	}
	a.Apply(must(a.RevokeKey(gw, now))[0])
	if _, err := a.SetGuardrails(gw, nil, now); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("a revoked key: %v", err)
	}
}

func must(evs []domain.Event, err error) []domain.Event {
	if err != nil {
		panic(err)
	}
	return evs
}
