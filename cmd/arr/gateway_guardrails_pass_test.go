package main_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestGatewayGuardrailsOnPassThrough: a Messages request that passes
// through to a Claude model is scanned on every string of its body and
// redacted in the body itself, so it still passes through: the Claude
// stand-in sees the placeholder, never the card number. Guardrails that
// change nothing (log) leave the body as it came; a refusal is
// Anthropic's 400.
func TestGatewayGuardrailsOnPassThrough(t *testing.T) {
	g := newPassGateway(t)
	const card = "4111 1111 1111 1111"
	set := func(policy string) {
		t.Helper()
		g.mustArr(nil, "guardrails", "set", "--email", "pass@example.com", "--policy", policy, "--json")
	}
	ask := func(text string) (int, []byte) {
		return g.postMessages(t, `{"model":"claude-sonnet-4-0","max_tokens":32,"messages":[{"role":"user","content":"`+text+`"}]}`)
	}

	set(`{"pii":[{"type":"credit_card","action":"log"}]}`)
	if code, body := ask("log " + card); code != http.StatusOK || !strings.Contains(string(g.up.LastBody("claude-sonnet-4-0")), card) {
		t.Fatalf("a log rule: %d %s", code, body)
	}

	set(`{"pii":[{"type":"credit_card","action":"redact"}]}`)
	code, body := ask("pay with " + card)
	if code != http.StatusOK {
		t.Fatalf("a redacted prompt: %d %s", code, body)
	}
	if sent := string(g.up.LastBody("claude-sonnet-4-0")); strings.Contains(sent, card) || !strings.Contains(sent, "pay with [CREDIT_CARD]") {
		t.Fatalf("the Claude stand-in was sent %s, want the prompt redacted in place", sent)
	}

	set(`{"pii":[{"type":"credit_card","action":"refuse"}]}`)
	if code, body := ask("pay with " + card); code != http.StatusBadRequest || !strings.Contains(string(body), "guardrail_pii_credit_card") ||
		!strings.Contains(string(body), `"type":"error"`) {
		t.Fatalf("a refused prompt: %d %s", code, body)
	}
}
