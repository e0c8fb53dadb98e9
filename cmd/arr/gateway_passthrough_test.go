package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// passGateway is `arr serve` over a catalog whose mid tier is an OpenAI
// model and a Claude model reached through Anthropic's Messages API, both
// at the loopback stand-in.
type passGateway struct {
	*env
	up  *upstreamtest.Server
	key string
	// sentVersion is the anthropic-version header of the SDK's last
	// request.
	sentVersion string
}

func newPassGateway(t *testing.T, aliases ...string) *passGateway {
	t.Helper()
	up := upstreamtest.Start(t)
	gpt := catModel("gpt-mid", "openai", "gpt-4.1", up.URL, 0.002, 0.008, 0.91)
	claude := catModel("claude-mid", "anthropic", "claude-sonnet-4-0", up.URL, 0.003, 0.015, 0.92)
	claude["api"], claude["cached_input_usd_per_1k"], claude["cache_write_usd_per_1k"] = "anthropic", 0.0003, 0.00375
	b, _ := json.Marshal(map[string]any{"tiers": []any{map[string]any{"name": "mid", "models": []any{gpt, claude}}},
		"aliases": map[string]string{"claude-*sonnet*": "mid"}})
	if len(aliases) > 0 {
		al := map[string]string{"claude-*sonnet*": "mid"}
		for _, a := range aliases {
			al[a] = "mid" // more names (Claude Code's haiku and opus) for the one tier
		}
		b, _ = json.Marshal(map[string]any{"tiers": []any{map[string]any{"name": "mid", "models": []any{gpt, claude}}}, "aliases": al})
	}
	file := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_CATALOG="+file, "ARR_TEST_UPSTREAM_KEY=sk-test", "ARR_UPSTREAM_TIMEOUT=2s",
		"ARR_UPSTREAM_BREAKER_FAILURES=2", "ARR_UPSTREAM_BREAKER_OPEN=1m")
	e.up()
	e.createAccount("pass@example.com", "enterprise")
	return &passGateway{env: e, up: up, key: e.mint("pass@example.com", "gateway").Secret}
}

// client is an Anthropic SDK client of the gateway whose every request
// body is kept in *sent.
func (g *passGateway) client(sent *[]byte) sdk.Client {
	return sdk.NewClient(option.WithBaseURL(g.gateway+"/"), option.WithAPIKey(g.key), option.WithMaxRetries(0),
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			g.sentVersion = r.Header.Get("Anthropic-Version")
			if r.Body != nil {
				b, _ := io.ReadAll(r.Body)
				*sent = b
				r.Body = io.NopCloser(bytes.NewReader(b))
			}
			return next(r)
		}))
}

// cachedParams is a Messages request with a cache_control breakpoint on a
// long system prompt, extended thinking and an earlier turn's thinking
// block (with its signature), which the chat translation would drop.
func cachedParams() sdk.MessageNewParams {
	return sdk.MessageNewParams{
		Model: "claude-sonnet-4-5-20250929", MaxTokens: 2048,
		System:   []sdk.TextBlockParam{{Text: strings.Repeat("a long stable system prefix ", 200), CacheControl: sdk.NewCacheControlEphemeralParam()}},
		Thinking: sdk.ThinkingConfigParamOfEnabled(1024),
		Messages: []sdk.MessageParam{
			sdk.NewUserMessage(sdk.NewTextBlock("hello")),
			sdk.NewAssistantMessage(sdk.NewThinkingBlock("c2lnbmF0dXJl", "the user greets"), sdk.NewTextBlock("hi")),
			sdk.NewUserMessage(sdk.NewTextBlock("say hello to arr")),
		},
	}
}

// sameButModel: what the stand-in received is what the client sent, each
// top-level member byte for byte, but for model (the catalog's upstream
// model) and arr's quality_floor (left out).
func sameButModel(t *testing.T, sent, got []byte) {
	t.Helper()
	var s, g map[string]json.RawMessage
	if json.Unmarshal(sent, &s) != nil || json.Unmarshal(got, &g) != nil {
		t.Fatalf("sent %s\nreceived %s", sent, got)
	}
	if string(g["model"]) != `"claude-sonnet-4-0"` {
		t.Errorf("model upstream %s", g["model"])
	}
	if _, ok := g["quality_floor"]; ok {
		t.Errorf("arr's quality_floor went upstream: %s", got)
	}
	for k, v := range s {
		if k == "model" || k == "quality_floor" {
			continue
		}
		if !bytes.Equal(g[k], v) {
			t.Errorf("%s: sent %s, upstream got %s", k, v, g[k])
		}
	}
	_, arrs := s["quality_floor"]
	if arrs && len(g) != len(s)-1 || !arrs && len(g) != len(s) {
		t.Errorf("upstream got %d members, the client sent %d (one of them arr's)", len(g), len(s))
	}
	for _, want := range []string{`"cache_control":{"type":"ephemeral"}`, `"type":"thinking"`, `"signature":"c2lnbmF0dXJl"`, `"budget_tokens":1024`} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("upstream body lacks %s: %s", want, got)
		}
	}
}

// passRouting is what the test reads of a routing object.
type passRouting struct {
	Model      string  `json:"model"`
	AuditHash  string  `json:"audit_hash"`
	CostUSD    float64 `json:"cost_usd"`
	CacheRead  int64   `json:"cache_read_tokens"`
	CacheWrite int64   `json:"cache_write_tokens"`
}

// checkCached checks routing and the audit entry against the upstream's
// usage: every input token priced (claude-mid: $3/M input, $0.30/M cache
// read, $3.75/M cache write, $15/M output, rounded up).
func (g *passGateway) checkCached(t *testing.T, what string, raw string, u sdk.Usage) {
	t.Helper()
	var m struct {
		Routing passRouting `json:"routing"`
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m.Routing.AuditHash == "" {
		t.Fatalf("%s: no routing object in %s", what, raw)
	}
	ri := m.Routing
	want := (u.InputTokens*3_000_000 + u.CacheReadInputTokens*300_000 + u.CacheCreationInputTokens*3_750_000 + u.OutputTokens*15_000_000 + 999_999) / 1_000_000
	if ri.Model != "claude-mid" || ri.CacheRead != u.CacheReadInputTokens || ri.CacheWrite != u.CacheCreationInputTokens ||
		int64(math.Round(ri.CostUSD*1e6)) != want {
		t.Errorf("%s: routing %+v; usage %+v; want cost %d µ$", what, ri, u, want)
	}
	v, _ := getAudit(t, g.gateway, ri.AuditHash, map[string]string{"Authorization": "Bearer " + g.key})
	var p struct {
		Prompt     int64  `json:"prompt_tokens"`
		CacheRead  int64  `json:"cache_read_tokens"`
		CacheWrite int64  `json:"cache_write_tokens"`
		Cost       int64  `json:"cost_micro_usd"`
		Model      string `json:"model"`
	}
	if json.Unmarshal(v.Payload, &p) != nil || p.CacheRead != u.CacheReadInputTokens || p.CacheWrite != u.CacheCreationInputTokens ||
		p.Cost != want || p.Model != "claude-mid" || p.Prompt != u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens {
		t.Errorf("%s: audit payload %s; usage %+v, want %d µ$", what, v.Payload, u, want)
	}
}

// TestGatewayMessagesPassThrough: an Anthropic SDK request for a claude-*
// alias reaches the tier's Claude model (preferred for Messages) through
// the Messages API as the client sent it, cache_control and thinking
// blocks included; the reply comes back as the upstream wrote it with
// arr's routing object, and the prompt-cache usage (written on the first
// call, read on the second) is priced in routing and the audit entry,
// replied and streamed.
func TestGatewayMessagesPassThrough(t *testing.T) {
	g := newPassGateway(t)
	var sent []byte
	c := g.client(&sent)
	ctx := context.Background()
	params := cachedParams()

	msg, err := c.Messages.New(ctx, params, option.WithJSONSet("quality_floor", 0.5))
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	sameButModel(t, sent, g.up.LastBody("claude-sonnet-4-0"))
	if msg.Usage.CacheCreationInputTokens == 0 || msg.Usage.CacheReadInputTokens != 0 || msg.Model != "claude-sonnet-4-0" {
		t.Fatalf("first call: usage %+v, model %s; want the prefix written to the cache", msg.Usage, msg.Model)
	}
	g.checkCached(t, "first call", msg.RawJSON(), msg.Usage)
	// The SDK's anthropic-version goes on, and the catalog's key.
	if h := g.up.LastHeaders("claude-sonnet-4-0"); h.Get("Anthropic-Version") != g.sentVersion || g.sentVersion == "" || h.Get("X-Api-Key") != "sk-test" {
		t.Errorf("upstream headers %v", h)
	}

	msg, err = c.Messages.New(ctx, params)
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	if msg.Usage.CacheReadInputTokens == 0 {
		t.Fatalf("second call read nothing from the cache: %+v", msg.Usage)
	}
	g.checkCached(t, "second call", msg.RawJSON(), msg.Usage)

	stream := c.Messages.NewStreaming(ctx, params)
	var types []string
	var acc sdk.Message
	var delta string
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if err := acc.Accumulate(ev); err != nil {
			t.Fatalf("accumulate: %v", err)
		}
		if ev.Type == "message_delta" {
			delta = ev.RawJSON()
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v (events %v)", err, types)
	}
	sameButModel(t, append(sent[:0:0], sent...), g.up.LastBody("claude-sonnet-4-0"))
	if len(types) < 4 || types[0] != "message_start" || types[len(types)-1] != "message_stop" || types[len(types)-2] != "message_delta" {
		t.Fatalf("stream events %v", types)
	}
	if acc.Usage.CacheReadInputTokens == 0 || !strings.Contains(acc.Content[0].Text, "Hello") && acc.Content[0].Text == "" {
		t.Fatalf("streamed message %+v", acc)
	}
	g.checkCached(t, "stream", delta, acc.Usage)
}

// TestGatewayMessagesPassThroughWire pins the bytes an Anthropic upstream
// is sent for a Messages request: the client's body with only model
// replaced and arr's routing fields left out (the whitespace between
// top-level members dropped, every value as it came: <, > and &
// unescaped, unknown-to-arr fields such as citations kept).
func TestGatewayMessagesPassThroughWire(t *testing.T) {
	g := newPassGateway(t)
	in := `{ "model": "claude-sonnet-4-5", "max_tokens": 512, "brand_pref": "anthropic", "max_cost_usd": 1,
  "system": [{"type": "text", "text": "be <brief> & kind", "cache_control": {"type": "ephemeral", "ttl": "5m"}}],
  "messages": [{"role": "user", "content": [{"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "a & b"}, "citations": {"enabled": true}, "title": "t"},
    {"type": "text", "text": "summarise <it>", "cache_control": {"type": "ephemeral"}}]}],
  "metadata": {"user_id": "u1"}, "temperature": 0.5 }`
	want := `{"model":"claude-sonnet-4-0","max_tokens":512,"system":[{"type": "text", "text": "be <brief> & kind", "cache_control": {"type": "ephemeral", "ttl": "5m"}}],` +
		`"messages":[{"role": "user", "content": [{"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "a & b"}, "citations": {"enabled": true}, "title": "t"},
    {"type": "text", "text": "summarise <it>", "cache_control": {"type": "ephemeral"}}]}],"metadata":{"user_id": "u1"},"temperature":0.5}`
	code, body := g.postMessages(t, in, "anthropic-beta", "prompt-caching-2024-07-31")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	if got := string(g.up.LastBody("claude-sonnet-4-0")); got != want {
		t.Fatalf("sent upstream\n%s\nwant\n%s", got, want)
	}
	if h := g.up.LastHeaders("claude-sonnet-4-0"); h.Get("Anthropic-Beta") != "prompt-caching-2024-07-31" {
		t.Errorf("anthropic-beta upstream %q", h.Get("Anthropic-Beta"))
	}

	// A server tool and its blocks, which the chat translation does not
	// serve: to the Claude model as they came, never to the chat model.
	tools := `{"model":"mid","max_tokens":256,"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":2}],` +
		`"messages":[{"role":"user","content":"find <it>"},{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"it"}},` +
		`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},{"type":"text","text":"nothing found"}]},{"role":"user","content":"try again"}]}`
	code, body = g.postMessages(t, tools)
	if code != http.StatusOK || !strings.Contains(string(body), `"model":"claude-mid"`) {
		t.Fatalf("server tool: %d %s", code, body)
	}
	if got, want := string(g.up.LastBody("claude-sonnet-4-0")), strings.Replace(tools, `"model":"mid"`, `"model":"claude-sonnet-4-0"`, 1); got != want {
		t.Fatalf("server tool sent upstream\n%s\nwant\n%s", got, want)
	}
	code, body = g.postMessages(t, strings.Replace(tools, `"model":"mid"`, `"model":"gpt-mid"`, 1))
	if code != http.StatusBadRequest || !strings.Contains(string(body), `"code":"unsupported_value"`) || !strings.Contains(string(body), "only models of the anthropic API") {
		t.Fatalf("server tool for the chat model: %d %s", code, body)
	}
	// A field arr does not know goes on too; the upstream judges it (the
	// stand-in, as Anthropic, refuses it: its 400 as it came).
	code, body = g.postMessages(t, `{"model":"mid","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"frobnicate":"fast"}`)
	if code != http.StatusBadRequest || !strings.Contains(string(body), `"message":"frobnicate: Extra inputs are not permitted"`) {
		t.Fatalf("unknown field: %d %s", code, body)
	}
}

func (g *passGateway) postMessages(t *testing.T, body string, headers ...string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.gateway+"/v1/messages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", g.key)
	req.Header.Set("anthropic-version", "2023-06-01")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestGatewayMessagesUpstreamRefusal: an Anthropic upstream's 400 reaches
// the client with its status and Anthropic's error body, is not retried
// elsewhere and never opens the model's breaker (more refusals than it
// takes failures, then the model answers); an overloaded Claude fails over
// to the tier's OpenAI model through the chat translation.
func TestGatewayMessagesUpstreamRefusal(t *testing.T) {
	g := newPassGateway(t)
	var sent []byte
	c := g.client(&sent)
	ctx := context.Background()
	params := sdk.MessageNewParams{Model: "claude-sonnet-4", MaxTokens: 64, Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hi"))}}
	g.up.Set("claude-sonnet-4-0", upstreamtest.Behavior{Status: http.StatusBadRequest})
	for i := 0; i < 4; i++ {
		_, err := c.Messages.New(ctx, params)
		var ae *sdk.Error
		if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest {
			t.Fatalf("refusal %d: %v", i, err)
		}
		var body struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(ae.RawJSON()), &body) != nil || body.Type != "error" || body.Error.Type != "invalid_request_error" ||
			body.Error.Message != "injected failure of claude-sonnet-4" { // the client's model, not the catalog's upstream_model
			t.Fatalf("refusal %d body %s", i, ae.RawJSON())
		}
	}
	if n := g.up.Calls("gpt-4.1"); n != 0 {
		t.Fatalf("a refusal was retried on the OpenAI model (%d calls)", n)
	}
	g.up.Reset()
	msg, err := c.Messages.New(ctx, params)
	if err != nil || !strings.Contains(msg.RawJSON(), `"model":"claude-mid"`) {
		t.Fatalf("after the refusals (breaker closed): %v %s", err, msg.RawJSON())
	}

	g.up.Set("claude-sonnet-4-0", upstreamtest.Behavior{Status: 529})
	msg, err = c.Messages.New(ctx, params)
	if err != nil || !strings.Contains(msg.RawJSON(), `"model":"gpt-mid"`) || g.up.Calls("gpt-4.1") != 1 || msg.Content[0].Text == "" {
		t.Fatalf("failover to the chat model: %v %s", err, msg.RawJSON())
	}
}
