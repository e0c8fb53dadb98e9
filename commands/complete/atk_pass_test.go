package complete_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/guardrail"
)

// Attacks on the /v1/messages pass-through (issue 40), against the
// completion use case with a loopback Anthropic upstream that answers
// what a script says. claude-mid: $3/M input, $3.75/M cache write,
// $0.30/M cache read, $15/M output.

// scripted is an Anthropic stand-in that answers every call with status
// and body (an SSE stream when the body starts with "event:").
func scripted(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if strings.HasPrefix(body, "event:") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// nativeReply is a non-streamed Messages request passed through.
func nativeReply(t *testing.T) *complete.Request {
	t.Helper()
	r := request(t, "search the web", map[string]any{"model": "mid"})
	r.Body = []byte(`{"model":"mid","max_tokens":256,"messages":[{"role":"user","content":"search the web"}],` +
		`"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":10}]}`)
	r.Native = &complete.Native{API: "anthropic", Body: r.Body}
	r.APIs = []string{"anthropic"}
	return r
}

// TestAtkPassServerToolUseUnbilled: the pass-through sends server tools
// (web_search) on, and Anthropic bills each search ($10 per 1,000, the
// usage's server_tool_use.web_search_requests) on top of the tokens; arr
// reads input, output and cache counts only, so ten searches ($0.10)
// cost the key nothing and the max_cost_usd ceiling never sees them.
func TestAtkPassServerToolUseUnbilled(t *testing.T) {
	reply := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-0","content":[{"type":"text","text":"found"}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1000,"output_tokens":100,` +
		`"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"server_tool_use":{"web_search_requests":10}}}`
	hs := nativeHarness(t, scripted(t, 200, reply))
	res, err := hs.complete(t, nativeReply(t), complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	es := hs.entries(t)
	tokens := int64(1000*3 + 100*15) // µ$ of the tokens
	searches := int64(10 * 10_000)   // µ$ of ten searches at $10/1k
	if len(es) != 1 || es[0].Completion.CostMicroUSD < tokens+searches {
		t.Fatalf("recorded %d µ$ (routing %+v); Anthropic charged %d µ$ (%d of it for 10 web searches)",
			es[0].Completion.CostMicroUSD, res.Reply.Routing, tokens+searches, searches)
	}
}

// TestAtkPassOneHourCacheWritesPricedAsFiveMinute: a client's
// cache_control {"type":"ephemeral","ttl":"1h"} goes upstream as it came,
// and Anthropic bills a 1-hour cache write at 2x the input price
// (usage.cache_creation.ephemeral_1h_input_tokens), not the 1.25x of a
// 5-minute one; arr prices every cache write at the catalog's one
// cache-write price: 100k 1-hour written tokens cost $0.60 upstream and
// $0.375 in arr (and in the reservation, whose dearest price is 1.25x).
func TestAtkPassOneHourCacheWritesPricedAsFiveMinute(t *testing.T) {
	reply := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-0","content":[{"type":"text","text":"ok"}],` +
		`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1,` +
		`"cache_read_input_tokens":0,"cache_creation_input_tokens":100000,` +
		`"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":100000}}}`
	hs := nativeHarness(t, scripted(t, 200, reply))
	if _, err := hs.complete(t, nativeReply(t), complete.CacheAuto); err != nil {
		t.Fatal(err)
	}
	es := hs.entries(t)
	upstream := int64(10*3 + 100000*6 + 1*15) // 1h writes at 2x $3/M
	if len(es) != 1 || es[0].Completion.CostMicroUSD < upstream {
		t.Fatalf("recorded %d µ$; Anthropic charged %d µ$ for 100k tokens written to its 1-hour cache", es[0].Completion.CostMicroUSD, upstream)
	}
}

// TestAtkPassHangUpBeforeDeltaBillsTheGuess: the whole answer relayed, the
// client hangs up before message_delta (the relay's write fails and it
// Closes the stream): the upstream already sent its count (4000 output
// tokens: a redacted_thinking block, whose bytes come in
// content_block_start and are never counted, and summarized thinking),
// but arr settles its guess from the relayed delta text and never records
// the completion in the audit chain at all.
func TestAtkPassHangUpBeforeDeltaBillsTheGuess(t *testing.T) {
	script := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-0\",\"content\":[],\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"" + strings.Repeat("QUJD", 2000) + "\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"the answer\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":4000}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	hs := nativeHarness(t, scripted(t, 200, script))
	res, err := hs.complete(t, messagesRequest(t, "think hard"), complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	stops := 0
	for i := 0; i < 100 && stops < 2; i++ {
		raw, err := res.Stream.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if bytes.HasPrefix(raw, []byte("event: content_block_stop")) {
			stops++
		}
	}
	res.Stream.Close() // the client is gone: the relay's write failed
	es := hs.entries(t)
	if len(es) != 1 {
		t.Fatalf("%d audit entries for a stream whose every content block was relayed (the upstream's message_delta said 4000 output tokens)", len(es))
	}
	if c := es[0].Completion; c.CompletionTokens < 4000 {
		t.Fatalf("billed %d output tokens (estimated %v); the upstream's message_delta, already sent, said 4000", c.CompletionTokens, c.UsageEstimated)
	}
}

// TestAtkPassRefusalLeaksUpstreamModel: an Anthropic 400 is passed to the
// client as it came, and Anthropic's messages name the model it was sent
// ("... maximum allowed number of output tokens for claude-sonnet-4-0"):
// the catalog's upstream_model (which arr otherwise hides behind its own
// ids) and the upstream's request_id reach the client verbatim.
func TestAtkPassRefusalLeaksUpstreamModel(t *testing.T) {
	body := `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-0"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`
	hs := nativeHarness(t, scripted(t, 400, body))
	_, err := hs.complete(t, nativeReply(t), complete.CacheAuto)
	var r *complete.Refused
	if !errors.As(err, &r) {
		t.Fatalf("not a refusal: %v", err)
	}
	if bytes.Contains(r.Body, []byte("claude-sonnet-4-0")) {
		t.Errorf("the client is answered %s: it names the catalog's upstream_model", r.Body)
	}
}

// TestAtkPassOperatorCreditRefusalReachesClient: Anthropic answers an
// account out of credit with 400 invalid_request_error "Your credit
// balance is too low to access the Anthropic API": the operator's
// billing, not the client's request. arr takes every 4xx but 401/403/404
// as the client's fault: it is passed on (the operator's billing state
// shown to every client), never failed over to the tier's other model,
// and the breaker never opens on it.
func TestAtkPassOperatorCreditRefusalReachesClient(t *testing.T) {
	body := `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`
	hs := nativeHarness(t, scripted(t, 400, body))
	_, err := hs.complete(t, nativeReply(t), complete.CacheAuto)
	var r *complete.Refused
	if errors.As(err, &r) {
		t.Fatalf("the operator's empty Anthropic balance is the client's %d: %s", r.Status, r.Body)
	}
}

// TestAtkPassFailureNamesBaseURL: when no upstream answers, the client's
// 502 upstream_unavailable message is UpstreamFailure's text, and each
// attempt's text is the transport's error: `Post
// "http://127.0.0.1:…/v1/messages": EOF`, the catalog's base_url (an
// Azure resource name, a private proxy's address) handed to every client
// whose request fails.
func TestAtkPassFailureNamesBaseURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close() // no answer at all
		}
	}))
	t.Cleanup(srv.Close)
	hs := nativeHarness(t, srv.URL+"/v1")
	_, err := hs.complete(t, nativeReply(t), complete.CacheAuto)
	var uf *complete.UpstreamFailure
	if !errors.As(err, &uf) {
		t.Fatalf("not an upstream failure: %v", err)
	}
	if host := strings.TrimPrefix(srv.URL, "http://"); strings.Contains(uf.Error(), host) {
		t.Fatalf("the client is told %q: it names the catalog's base_url", uf.Error())
	}
}

// TestAtkPassGuardrailsSkipUntranslatedBlocks: the prompt guardrails read
// the chat translation, and a pass-through request's translation leaves
// out what it cannot express (readapi/gateway/messages'
// TestAtkPassUntranslatedTextIsNotSized: a search_result block's text is
// not in it); nothing matched, nothing was rewritten, so the request goes
// to the Anthropic model as it came: a card number under a redact rule
// (or a refuse rule, a deny pattern, the prompt-size cap, the webhook
// guardrail) reaches the upstream untouched inside a search_result block.
func TestAtkPassGuardrailsSkipUntranslatedBlocks(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-0","content":[{"type":"text","text":"ok"}],`+
			`"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}`)
	}))
	t.Cleanup(srv.Close)
	hs := nativeHarness(t, srv.URL+"/v1")
	hs.caller.Guardrails = guardrail.Policy{PII: []guardrail.PIIRule{{Type: guardrail.CreditCard, Action: guardrail.Redact}}}
	r := request(t, "sum up", map[string]any{"model": "mid"}) // the translation ParseNative makes of the body below
	r.Body = []byte(`{"model":"mid","max_tokens":64,"messages":[{"role":"user","content":[` +
		`{"type":"search_result","source":"http://127.0.0.1/crm","title":"crm","content":[{"type":"text","text":"card on file: ` + card + `"}]},` +
		`{"type":"text","text":"sum up"}]}]}`)
	r.Native = &complete.Native{API: "anthropic", Body: r.Body}
	r.APIs = []string{"anthropic"}
	if _, err := hs.complete(t, r, complete.CacheAuto); err != nil {
		t.Fatalf("%v (a refusal would be the guardrail holding)", err)
	}
	if bytes.Contains(got, []byte(card)) {
		t.Fatalf("the upstream received the card number under a redact rule: %s", got)
	}
}
