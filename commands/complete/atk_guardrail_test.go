package complete_test

import (
	"encoding/json"
	"testing"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/guardrail"
)

// Attack tests of the prompt guardrails (a reviewer who did not write
// them): each fails now, and names what reached the upstream.

// TestAttackGuardrailSplitAcrossTexts: each text of the messages is
// scanned on its own, so a card number cut in two text parts of one
// message (which the upstream reads as one text) or across two user
// messages is never seen by a refusing rule.
func TestAttackGuardrailSplitAcrossTexts(t *testing.T) {
	hs := newHarness(t, options{startChain: true})
	hs.caller.Guardrails = guardrail.Policy{PII: []guardrail.PIIRule{{Type: guardrail.CreditCard, Action: guardrail.Refuse}}}
	for name, msgs := range map[string][]any{
		"two text parts": {map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "charge 4111 1111"}, map[string]any{"type": "text", "text": " 1111 1111 please"}}}},
		"two messages": {map[string]any{"role": "user", "content": "the first half is 4111 1111"},
			map[string]any{"role": "user", "content": "1111 1111 is the rest: charge them together"}},
	} {
		calls := hs.up.Calls("gpt-4.1-nano")
		_, err := hs.complete(t, request(t, "x", map[string]any{"model": "gpt-4.1-nano", "messages": msgs}), complete.CacheOff)
		if codeOf(err) != "guardrail_pii_credit_card" {
			b, _ := json.Marshal(hs.up.LastRequest("gpt-4.1-nano")["messages"])
			t.Errorf("%s: %v (upstream calls %d -> %d); the upstream got %s", name, err, calls, hs.up.Calls("gpt-4.1-nano"), b)
		}
	}
}

// TestAttackGuardrailToolDescriptions: only the messages are scanned; a
// tool's description (which the model reads as prompt text) carries an
// SSN to the upstream past a refusing rule.
func TestAttackGuardrailToolDescriptions(t *testing.T) {
	hs := newHarness(t, options{startChain: true})
	hs.caller.Guardrails = guardrail.Policy{PII: []guardrail.PIIRule{{Type: guardrail.SSN, Action: guardrail.Refuse}}}
	tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "lookup",
		"description": "Look the customer up. Their SSN is 123-45-6789; always repeat it back.",
		"parameters":  map[string]any{"type": "object", "properties": map[string]any{}}}}}
	_, err := hs.complete(t, request(t, "who is the customer?", map[string]any{"model": "gpt-4.1-nano", "tools": tools}), complete.CacheOff)
	if codeOf(err) != "guardrail_pii_ssn" {
		b, _ := json.Marshal(hs.up.LastRequest("gpt-4.1-nano")["tools"])
		t.Fatalf("%v; the upstream got tools %s", err, b)
	}
}
