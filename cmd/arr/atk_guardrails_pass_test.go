package main_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestAttackGuardrailsPassThroughUnscanned: the guardrails scan the chat
// translation of a Messages request, but a request they do not change
// passes through to the Claude model as it came; what the translation
// leaves out (a document's title and context, a document of content
// blocks, a server tool's input) reaches Anthropic unscanned, past a
// refusing rule and past the prompt-size cap.
func TestAttackGuardrailsPassThroughUnscanned(t *testing.T) {
	g := newPassGateway(t)
	const card = "4111 1111 1111 1111"
	set := func(policy string) {
		t.Helper()
		g.mustArr(nil, "guardrails", "set", "--email", "pass@example.com", "--policy", policy, "--json")
	}
	set(`{"pii":[{"type":"credit_card","action":"refuse"}]}`)
	for name, body := range map[string]string{
		"document title and context": `{"model":"claude-sonnet-4-0","max_tokens":32,"messages":[{"role":"user","content":[` +
			`{"type":"document","source":{"type":"text","media_type":"text/plain","data":"quarterly notes"},"title":"card ` + card + `","context":"charge card ` + card + `"},` +
			`{"type":"text","text":"summarise the document"}]}]}`,
		"document of content blocks": `{"model":"claude-sonnet-4-0","max_tokens":32,"messages":[{"role":"user","content":[` +
			`{"type":"document","source":{"type":"content","content":[{"type":"text","text":"charge card ` + card + `"}]}},` +
			`{"type":"text","text":"summarise the document"}]}]}`,
		"server tool input": `{"model":"claude-sonnet-4-0","max_tokens":32,"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":1}],` +
			`"messages":[{"role":"user","content":"find it"},{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"` + card + `"}},` +
			`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},{"type":"text","text":"nothing found"}]},{"role":"user","content":"try again"}]}`,
	} {
		code, resp := g.postMessages(t, body)
		if code != http.StatusBadRequest || !strings.Contains(string(resp), "guardrail_pii_credit_card") {
			t.Errorf("%s: %d %.200s; the Claude stand-in got the card: %v", name, code, resp,
				strings.Contains(string(g.up.LastBody("claude-sonnet-4-0")), card))
		}
	}

	set(`{"max_prompt_bytes":200}`)
	big := strings.Repeat("lorem ipsum ", 500)
	code, resp := g.postMessages(t, `{"model":"claude-sonnet-4-0","max_tokens":32,"messages":[{"role":"user","content":[`+
		`{"type":"document","source":{"type":"content","content":[{"type":"text","text":"`+big+`"}]}},{"type":"text","text":"summarise"}]}]}`)
	if code != http.StatusBadRequest || !strings.Contains(string(resp), "guardrail_prompt_too_large") {
		t.Errorf("a %d-byte document under a 200-byte cap: %d %.200s", len(big), code, resp)
	}
}

// TestAttackGuardrailsWebhookURLToKeys: GET /v1/guardrails shows any
// gateway key of the account the webhook guardrail's URL as it was set,
// query and all; a receiver's token in the URL (the way arr's own URL
// checks tell customers to authenticate a webhook: "put a token in the
// path or query") goes to every key holder, as do the deny patterns'
// text (a codename list is the secret it guards).
func TestAttackGuardrailsWebhookURLToKeys(t *testing.T) {
	g := newGateway(t, "enterprise", "ARR_WEBHOOK_PRIVATE=allow")
	g.mustArr(nil, "guardrails", "set", "--email", "gw-enterprise@example.com", "--policy",
		`{"deny":[{"pattern":"(?i)project (zeus|hera)"}],"webhook":{"url":"http://127.0.0.1:9/guard?token=tok-s3cr3t-receiver","fail":"open"}}`, "--json")
	req, _ := http.NewRequest(http.MethodGet, g.gateway+"/v1/guardrails", nil)
	req.Header.Set("Authorization", "Bearer "+g.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/guardrails: %d %s", resp.StatusCode, b)
	}
	if strings.Contains(string(b), "tok-s3cr3t-receiver") {
		t.Errorf("a gateway key reads the webhook receiver's token: %s", b)
	}
	if strings.Contains(string(b), "zeus|hera") {
		t.Errorf("a gateway key reads the deny patterns it is meant not to get past: %s", b)
	}
}
