package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// messages posts body to path (/v1/messages or /v1/messages/count_tokens)
// with the headers given (name, value, …; none: the key in x-api-key and
// anthropic-version, as Anthropic's SDKs send them) and returns the
// status, headers and decoded body.
func (g *gw) messages(t testing.TB, path string, body any, headers ...string) (int, http.Header, map[string]any) {
	t.Helper()
	resp := g.postMessages(t, path, body, headers...)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %d, not JSON: %q", path, resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header, out
}

func (g *gw) postMessages(t testing.TB, path string, body any, headers ...string) *http.Response {
	t.Helper()
	b, ok := body.([]byte)
	if !ok {
		b, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(http.MethodPost, g.gateway+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if len(headers) == 0 {
		headers = []string{"x-api-key", g.key, "anthropic-version", "2023-06-01"}
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	return resp
}

// messageEvents posts a streamed Messages request and returns the response
// (body read) and its events.
func (g *gw) messageEvents(t testing.TB, body map[string]any, headers ...string) (*http.Response, []sseEvent) {
	t.Helper()
	body["stream"] = true
	resp := g.postMessages(t, "/v1/messages", body, headers...)
	defer resp.Body.Close()
	var evs []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" || cur.event != "" {
				evs = append(evs, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event:"):
			cur.event = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			cur.data = strings.TrimSpace(line[5:])
		}
	}
	return resp, evs
}

// anthropicError checks an error body of Anthropic's shape and returns its
// error type and arr's code.
func anthropicError(t testing.TB, body map[string]any) (typ, code string) {
	t.Helper()
	e, ok := body["error"].(map[string]any)
	if body["type"] != "error" || !ok {
		t.Fatalf("not Anthropic's error shape: %v", body)
	}
	if _, ok := e["message"].(string); !ok {
		t.Fatalf("error without a message: %v", body)
	}
	typ, _ = e["type"].(string)
	code, _ = e["code"].(string)
	return typ, code
}

func textOf(t testing.TB, msg map[string]any) string {
	t.Helper()
	var b strings.Builder
	blocks, _ := msg["content"].([]any)
	for _, bl := range blocks {
		if m, _ := bl.(map[string]any); m["type"] == "text" {
			b.WriteString(m["text"].(string))
		}
	}
	return b.String()
}

// TestGatewayMessagesRoute: POST /v1/messages answers Anthropic's Message
// for a routed chat completion (x-api-key or Bearer, system prompts,
// blocks, images, tools, aliases of Claude model names, streaming with
// Anthropic's events), count_tokens counts as routing does, and every
// error has Anthropic's shape.
func TestGatewayMessagesRoute(t *testing.T) {
	g := newGateway(t, "enterprise", "ARR_MODEL_ALIASES=claude-sonnet-4-5-20250929=gpt-4.1-mini, my-*=nano")
	msgs := func(s string) []map[string]any { return []map[string]any{{"role": "user", "content": s}} }

	// A plain message: system blocks, x-api-key, routing in body and headers.
	code, h, m := g.messages(t, "/v1/messages", map[string]any{"model": "auto", "max_tokens": 100, "temperature": 0.2,
		"stop_sequences": []string{"\n\nHuman:"}, "metadata": map[string]any{"user_id": "u-1"},
		"system":   []map[string]any{{"type": "text", "text": "Be brief.", "cache_control": map[string]string{"type": "ephemeral"}}},
		"messages": msgs("Say hello")})
	if code != http.StatusOK || m["type"] != "message" || m["role"] != "assistant" || !strings.HasPrefix(m["id"].(string), "msg_") {
		t.Fatalf("message: %d %v", code, m)
	}
	if !strings.HasPrefix(textOf(t, m), "Hello from") || m["stop_reason"] != "end_turn" || m["stop_sequence"] != nil {
		t.Fatalf("message content: %v", m)
	}
	u := m["usage"].(map[string]any)
	if u["input_tokens"].(float64) < 1 || u["output_tokens"].(float64) < 1 || u["cache_read_input_tokens"] == nil {
		t.Fatalf("usage %v", u)
	}
	r := routingOf(t, m)
	if len(r["audit_hash"].(string)) != 64 || r["tier"] != h.Get("X-Arr-Tier") || h.Get("X-Arr-Audit-Hash") != r["audit_hash"] || h.Get("X-RateLimit-Remaining") == "" {
		t.Fatalf("routing %v headers %v", r, h)
	}
	last := g.up.LastRequest(r["model"].(string))
	if ms := last["messages"].([]any); len(ms) != 2 || ms[0].(map[string]any)["role"] != "system" || ms[0].(map[string]any)["content"] != "Be brief." {
		t.Fatalf("upstream messages %v", last["messages"])
	}
	if last["max_completion_tokens"] != float64(100) || last["user"] != "u-1" || last["stop"] == nil || last["temperature"] != 0.2 {
		t.Fatalf("upstream request %v", last)
	}
	if code, _, _ := g.messages(t, "/v1/messages", map[string]any{"max_tokens": 10, "messages": msgs("hi")}, "Authorization", "Bearer "+g.key); code != http.StatusOK {
		t.Fatalf("Bearer key: %d", code)
	}

	// Model names: Claude's through the shipped aliases and
	// ARR_MODEL_ALIASES (an exact name before the shipped pattern), tiers,
	// model ids, unknown names.
	for name, want := range map[string]string{"claude-sonnet-4-5-20250929": "small/gpt-4.1-mini", "claude-sonnet-4-6": "mid/", "claude-haiku-4-5": "small/",
		"claude-opus-4-1": "high/", "nano": "nano/", "claude-sonnet-4": "mid/claude-sonnet-4", "my-model": "nano/"} {
		code, _, m := g.messages(t, "/v1/messages", map[string]any{"model": name, "max_tokens": 10, "messages": msgs("hi")})
		tier, model, _ := strings.Cut(want, "/")
		if r := routingOf(t, m); code != http.StatusOK || r["tier"] != tier || (model != "" && r["model"] != model) {
			t.Fatalf("model %s: %d %v", name, code, m)
		}
	}
	code, _, m = g.messages(t, "/v1/messages", map[string]any{"model": "gpt-17", "max_tokens": 10, "messages": msgs("hi")})
	if typ, c := anthropicError(t, m); code != http.StatusNotFound || typ != "not_found_error" || c != "model_not_found" {
		t.Fatalf("unknown model: %d %v", code, m)
	}

	// Errors in Anthropic's shape: no key, a bad body, no max_tokens, an
	// unknown field, an upstream's own refusal.
	code, _, m = g.messages(t, "/v1/messages", map[string]any{"max_tokens": 10, "messages": msgs("hi")}, "anthropic-version", "2023-06-01")
	if typ, c := anthropicError(t, m); code != http.StatusUnauthorized || typ != "authentication_error" || c != "missing_api_key" {
		t.Fatalf("no key: %d %v", code, m)
	}
	for _, tc := range []struct {
		body any
		code string
	}{
		{[]byte(`{"messages":`), "invalid_json"},
		{map[string]any{"messages": msgs("hi")}, "missing_max_tokens"},
		{map[string]any{"max_tokens": 10, "messages": msgs("hi"), "frequency_penalty": 1}, "unknown_field"},
		{map[string]any{"max_tokens": 10, "messages": []map[string]any{{"role": "tool", "content": "x"}}}, "invalid_role"},
		{map[string]any{"max_tokens": 10, "messages": []map[string]any{{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": "toolu_x", "content": "x"}}}}}, "invalid_value"},
		{map[string]any{"max_tokens": 10, "messages": msgs("hi"), "tools": []map[string]any{{"type": "web_search_20250305", "name": "web_search"}}}, "unsupported_value"},
	} {
		code, _, m := g.messages(t, "/v1/messages", tc.body)
		if typ, c := anthropicError(t, m); code != http.StatusBadRequest || typ != "invalid_request_error" || c != tc.code {
			t.Fatalf("%v: %d %v", tc.body, code, m)
		}
	}
	g.up.Set("gpt-4.1-mini", upstreamtest.Behavior{Status: 400})
	code, _, m = g.messages(t, "/v1/messages", map[string]any{"model": "gpt-4.1-mini", "max_tokens": 10, "messages": msgs("hi")})
	if typ, _ := anthropicError(t, m); code != http.StatusBadRequest || typ != "invalid_request_error" || !strings.Contains(m["error"].(map[string]any)["message"].(string), "upstream") {
		t.Fatalf("upstream refusal: %d %v", code, m)
	}
	g.up.Reset()

	// Images and tool round trips translate to chat's parts and tool messages.
	code, _, m = g.messages(t, "/v1/messages", map[string]any{"model": "nano", "max_tokens": 50, "messages": []map[string]any{{"role": "user", "content": []map[string]any{
		{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
		{"type": "text", "text": "What is this?"}}}}})
	if code != http.StatusOK {
		t.Fatalf("image: %d %v", code, m)
	}
	parts := g.up.LastRequest(routingOf(t, m)["model"].(string))["messages"].([]any)[0].(map[string]any)["content"].([]any)
	if img := parts[0].(map[string]any); img["type"] != "image_url" || img["image_url"].(map[string]any)["url"] != "data:image/png;base64,iVBORw0KGgo=" {
		t.Fatalf("image part upstream: %v", parts)
	}
	tools := []map[string]any{{"name": "get_weather", "input_schema": map[string]any{"type": "object"}}, {"name": "get_time", "input_schema": map[string]any{"type": "object"}}}
	code, _, m = g.messages(t, "/v1/messages", map[string]any{"model": "nano", "max_tokens": 50, "tools": tools,
		"tool_choice": map[string]any{"type": "any", "disable_parallel_tool_use": true}, "messages": msgs("Weather in Paris?")})
	blocks := m["content"].([]any)
	if code != http.StatusOK || m["stop_reason"] != "tool_use" || len(blocks) != 1 || blocks[0].(map[string]any)["type"] != "tool_use" {
		t.Fatalf("tool_use: %d %v", code, m)
	}
	use := blocks[0].(map[string]any)
	if use["input"].(map[string]any)["input"] != "Weather in Paris?" {
		t.Fatalf("tool_use input %v", use)
	}
	up := g.up.LastRequest(routingOf(t, m)["model"].(string))
	if up["tool_choice"] != "required" || up["parallel_tool_calls"] != false || len(up["tools"].([]any)) != 2 {
		t.Fatalf("tools upstream %v", up)
	}
	code, _, m = g.messages(t, "/v1/messages", map[string]any{"model": "nano", "max_tokens": 50, "tools": tools, "messages": []map[string]any{
		{"role": "user", "content": "Weather in Paris?"},
		{"role": "assistant", "content": []any{map[string]any{"type": "thinking", "thinking": "hm", "signature": "s"}, use}},
		{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": use["id"], "content": []map[string]any{{"type": "text", "text": "sunny"}}}}}}})
	if code != http.StatusOK || textOf(t, m) != "Tool results: sunny" {
		t.Fatalf("tool_result: %d %v", code, m)
	}

	// count_tokens is the estimate routing uses: a reply whose upstream
	// reports no usage is counted with the same number.
	countBody := map[string]any{"model": "nano", "system": "Count me.", "tools": tools, "messages": msgs("How many tokens is this prompt, all told?")}
	code, _, c := g.messages(t, "/v1/messages/count_tokens", countBody)
	if code != http.StatusOK || c["input_tokens"].(float64) < 10 {
		t.Fatalf("count_tokens: %d %v", code, c)
	}
	g.up.Set("", upstreamtest.Behavior{OmitUsage: true})
	countBody["max_tokens"] = 50
	countBody["tool_choice"] = map[string]any{"type": "none"}
	code, _, m = g.messages(t, "/v1/messages", countBody)
	if code != http.StatusOK || m["usage"].(map[string]any)["input_tokens"] != c["input_tokens"] {
		t.Fatalf("count_tokens %v, the estimated usage %d %v", c, code, m["usage"])
	}
	g.up.Reset()
	code, _, m = g.messages(t, "/v1/messages/count_tokens", map[string]any{"messages": "x"})
	if typ, _ := anthropicError(t, m); code != http.StatusBadRequest || typ != "invalid_request_error" {
		t.Fatalf("count_tokens of a bad body: %d %v", code, m)
	}

	// Streams: Anthropic's event sequence for text and for tool use.
	resp, evs := g.messageEvents(t, map[string]any{"model": "nano", "max_tokens": 50, "messages": msgs("Stream some words")})
	checkMessageEvents(t, resp, evs, "text_delta", "end_turn")
	resp, evs = g.messageEvents(t, map[string]any{"model": "nano", "max_tokens": 50, "tools": tools, "messages": msgs("Weather and time?")})
	checkMessageEvents(t, resp, evs, "input_json_delta", "tool_use")

	// The response cache serves Messages too (its key is the translated
	// chat request), as a Message and as a replayed stream.
	cached := map[string]any{"model": "nano", "max_tokens": 50, "messages": msgs("Cache me")}
	for i, hit := range []bool{false, true} {
		code, _, m := g.messages(t, "/v1/messages", cached, "x-api-key", g.key, "X-Arr-Cache", "on")
		if r := routingOf(t, m); code != http.StatusOK || r["cache_hit"] != hit || !strings.HasPrefix(textOf(t, m), "Hello from") {
			t.Fatalf("cached message %d: %d %v", i, code, m)
		}
	}
	resp, evs = g.messageEvents(t, map[string]any{"model": "nano", "max_tokens": 50, "messages": msgs("Cache me")}, "x-api-key", g.key, "X-Arr-Cache", "on")
	checkMessageEvents(t, resp, evs, "text_delta", "end_turn")
	if resp.Header.Get("X-Arr-Cache-Hit") != "true" {
		t.Fatalf("streamed cache hit: %v", resp.Header)
	}

	// A stream the upstream breaks off ends with an error event of
	// Anthropic's shape, never message_stop.
	g.up.Set("gpt-4.1-nano", upstreamtest.Behavior{CutAfter: 3})
	resp, evs = g.messageEvents(t, map[string]any{"model": "gpt-4.1-nano", "max_tokens": 50, "messages": msgs("Tell me a long story about a lighthouse keeper")})
	lastEv := evs[len(evs)-1]
	var e map[string]any
	_ = json.Unmarshal([]byte(lastEv.data), &e)
	if typ, c := anthropicError(t, e); resp.StatusCode != http.StatusOK || lastEv.event != "error" || typ != "api_error" || c != "upstream_stream_cut" || evs[0].event != "message_start" {
		t.Fatalf("cut stream: %v", evs)
	}
	for _, ev := range evs {
		if ev.event == "message_stop" {
			t.Fatalf("a cut stream says message_stop: %v", evs)
		}
	}
	g.up.Reset()
}

// checkMessageEvents checks a stream's events: message_start, ping, blocks
// (start, deltas of kind, stop) indexed in order, message_delta with
// stop_reason, usage and routing, message_stop.
func checkMessageEvents(t *testing.T, resp *http.Response, evs []sseEvent, kind, stop string) {
	t.Helper()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" || len(evs) < 6 {
		t.Fatalf("stream: %d %v", resp.StatusCode, evs)
	}
	var names []string
	open, next, deltas := -1, 0, 0
	for _, e := range evs {
		var d map[string]any
		if err := json.Unmarshal([]byte(e.data), &d); err != nil || d["type"] != e.event {
			t.Fatalf("event %s: data %s", e.event, e.data)
		}
		names = append(names, e.event)
		switch e.event {
		case "content_block_start":
			if open != -1 || int(d["index"].(float64)) != next {
				t.Fatalf("block start out of order: %v", evs)
			}
			open = next
		case "content_block_delta":
			if int(d["index"].(float64)) != open || d["delta"].(map[string]any)["type"] != kind {
				t.Fatalf("delta %s outside its block or not %s", e.data, kind)
			}
			deltas++
		case "content_block_stop":
			open, next = -1, next+1
		case "message_delta":
			u := d["usage"].(map[string]any)
			if d["delta"].(map[string]any)["stop_reason"] != stop || u["output_tokens"].(float64) < 1 || u["input_tokens"].(float64) < 1 {
				t.Fatalf("message_delta %s", e.data)
			}
			if r, _ := d["routing"].(map[string]any); r == nil || len(r["audit_hash"].(string)) != 64 {
				t.Fatalf("message_delta without routing: %s", e.data)
			}
		}
	}
	if names[0] != "message_start" || names[1] != "ping" || names[len(names)-2] != "message_delta" || names[len(names)-1] != "message_stop" || next == 0 || deltas == 0 {
		t.Fatalf("event sequence %v", names)
	}
	if len(resp.Trailer.Get("X-Arr-Audit-Hash")) != 64 && len(resp.Header.Get("X-Arr-Audit-Hash")) != 64 {
		t.Fatalf("no audit hash header or trailer: %v %v", resp.Header, resp.Trailer)
	}
}
