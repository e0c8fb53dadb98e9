package main_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestGatewayGuardrailsOnPassThrough: a Messages request that would pass
// through to a Claude model as it came is, when the guardrails redact its
// prompt (or scan its output), sent translated to the tier's OpenAI model
// instead: the Claude stand-in never sees the card number, the OpenAI one
// sees the placeholder. Guardrails that change nothing (log) leave the
// pass-through as it is; a refusal is Anthropic's 400.
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
	before := string(g.up.LastBody("claude-sonnet-4-0"))
	code, body := ask("pay with " + card)
	if code != http.StatusOK {
		t.Fatalf("a redacted prompt: %d %s", code, body)
	}
	if string(g.up.LastBody("claude-sonnet-4-0")) != before {
		t.Fatal("the Claude stand-in was sent a prompt the guardrails redact")
	}
	if got := lastUserTextOf(t, g.up.LastRequest("gpt-4.1")); got != "pay with [CREDIT_CARD]" {
		t.Fatalf("the OpenAI stand-in received %q", got)
	}

	set(`{"pii":[{"type":"credit_card","action":"refuse"}]}`)
	if code, body := ask("pay with " + card); code != http.StatusBadRequest || !strings.Contains(string(body), "guardrail_pii_credit_card") ||
		!strings.Contains(string(body), `"type":"error"`) {
		t.Fatalf("a refused prompt: %d %s", code, body)
	}
}

func lastUserTextOf(t *testing.T, req map[string]any) string {
	t.Helper()
	msgs, _ := req["messages"].([]any)
	if len(msgs) == 0 {
		t.Fatal("no messages")
	}
	m, _ := msgs[len(msgs)-1].(map[string]any)
	s, _ := m["content"].(string)
	return s
}
