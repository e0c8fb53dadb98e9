package main_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

func TestGatewayCompletions(t *testing.T) {
	g := newGateway(t, "enterprise")

	// A plain completion: OpenAI body plus routing, headers, audit entry.
	code, h, body := g.chat(t, map[string]any{"messages": userMsg("Say hello"), "temperature": 0.7, "user": "u-42", "seed": 7})
	if code != http.StatusOK {
		t.Fatalf("completion: %d %v", code, body)
	}
	r := routingOf(t, body)
	if r["tier"] != "nano" || r["model"] != "gpt-4.1-nano" || r["cache_hit"] != false {
		t.Fatalf("routing %v: want nano / gpt-4.1-nano, no cache hit", r)
	}
	hash, _ := r["audit_hash"].(string)
	if len(hash) != 64 || h.Get("X-Arr-Audit-Hash") != hash || h.Get("X-Arr-Tier") != "nano" {
		t.Fatalf("audit hash %q, headers %v", hash, h)
	}
	choices := body["choices"].([]any)
	msg := choices[0].(map[string]any)["message"].(map[string]any)
	if !strings.HasPrefix(msg["content"].(string), "Hello from gpt-4.1-nano: Say hello") {
		t.Fatalf("content %v", msg["content"])
	}
	// Fields pass through unchanged; the gateway's own do not go upstream.
	last := g.up.LastRequest("gpt-4.1-nano")
	if last["user"] != "u-42" || last["seed"] != float64(7) || last["temperature"] != 0.7 {
		t.Fatalf("upstream saw %v", last)
	}
	code, ab := get(t, g.gateway+"/v1/audit/"+hash, g.owner())
	var entry struct {
		Hash, PrevHash string
		Verified       bool
		Payload        map[string]any
	}
	entry.Hash, entry.PrevHash = "", ""
	var raw map[string]any
	_ = json.Unmarshal(ab, &raw)
	if code != http.StatusOK || raw["hash"] != hash || raw["verified"] != true || raw["prev_hash"] == nil {
		t.Fatalf("audit entry: %d %s", code, ab)
	}
	payload := raw["payload"].(map[string]any)
	if payload["tier"] != "nano" || payload["prompt_tokens"].(float64) <= 0 || payload["cost_micro_usd"].(float64) <= 0 {
		t.Fatalf("audit payload %v", payload)
	}
	if strings.Contains(string(ab), "Say hello") {
		t.Fatal("the audit entry contains the prompt text")
	}
	if code, _ := get(t, g.gateway+"/v1/audit/"+strings.Repeat("0", 64), nil); code != http.StatusNotFound {
		t.Fatalf("unknown hash: %d", code)
	}

	// Streamed with usage: chunks, a final chunk with usage and routing, [DONE].
	resp, evs := g.chatStream(t, map[string]any{"messages": userMsg("Stream three words"), "stream": true, "stream_options": map[string]any{"include_usage": true}})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Arr-Tier") != "nano" || len(evs) < 4 {
		t.Fatalf("stream: %d %v %v", resp.StatusCode, resp.Header, evs)
	}
	if evs[len(evs)-1].data != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %v", evs[len(evs)-1])
	}
	var final map[string]any
	_ = json.Unmarshal([]byte(evs[len(evs)-2].data), &final)
	fr := routingOf(t, final)
	u, _ := final["usage"].(map[string]any)
	if u == nil || u["completion_tokens"].(float64) < 1 || len(fr["audit_hash"].(string)) != 64 {
		t.Fatalf("final chunk %v", final)
	}
	if resp.Trailer.Get("X-Arr-Audit-Hash") != fr["audit_hash"] {
		t.Fatalf("trailer %v, routing %v", resp.Trailer, fr)
	}
	code, ab = get(t, g.gateway+"/v1/audit/"+fr["audit_hash"].(string), g.owner())
	_ = json.Unmarshal(ab, &raw)
	if code != 200 || raw["payload"].(map[string]any)["completion_tokens"] != u["completion_tokens"] || raw["prev_hash"] != hash {
		t.Fatalf("streamed completion's audit entry %s (want real usage %v and prev %s)", ab, u, hash)
	}

	// Errors in the OpenAI shape.
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		param  string
	}{
		{"no messages", map[string]any{"model": "auto"}, 400, "missing_messages", "messages"},
		{"empty messages", map[string]any{"messages": []any{}}, 400, "empty_messages", "messages"},
		{"bad role", map[string]any{"messages": []any{map[string]any{"role": "wizard", "content": "x"}}}, 400, "invalid_role", "messages[0].role"},
		{"wrong type", map[string]any{"messages": userMsg("x"), "temperature": "hot"}, 400, "invalid_value", "temperature"},
		{"unknown model", map[string]any{"messages": userMsg("x"), "model": "gpt-17"}, 404, "model_not_found", "model"},
		{"impossible", map[string]any{"messages": userMsg("Prove step by step the theorem, compare designs ```func x(){}```"), "quality_floor": 0.9, "max_cost_usd": 0.00001}, 400, "no_tier_satisfies_constraints", "max_cost_usd"},
		{"brand_pref needs pro", map[string]any{"messages": userMsg("x"), "brand_pref": "google"}, 200, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := g.chat(t, tc.body)
			if code != tc.status {
				t.Fatalf("%d %v, want %d", code, body, tc.status)
			}
			if tc.code == "" {
				return
			}
			typ, c, p := errorOf(body)
			if c != tc.code || p != tc.param || typ == "" {
				t.Fatalf("error %v, want code %s param %s", body, tc.code, tc.param)
			}
			if tc.code == "no_tier_satisfies_constraints" {
				msg := body["error"].(map[string]any)["message"].(string)
				if !strings.Contains(msg, "raise max_cost_usd to at least") {
					t.Fatalf("the 400 does not say what would satisfy it: %s", msg)
				}
			}
		})
	}
	big := strings.Repeat("x", 5<<20)
	if code, _, body := g.chat(t, map[string]any{"messages": userMsg(big)}); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %d %v", code, body)
	} else if typ, c, _ := errorOf(body); typ != "invalid_request_error" || c != "body_too_large" {
		t.Fatalf("oversized body: %v", body)
	}

	// Models (public), usage (keyed, not counted), healthz.
	code, mb := get(t, g.gateway+"/v1/models", nil)
	if code != 200 || !strings.Contains(string(mb), `"id":"auto"`) || !strings.Contains(string(mb), `"context_window"`) {
		t.Fatalf("models: %d %s", code, mb)
	}
	code, ub := get(t, g.gateway+"/v1/usage?days=7", map[string]string{"Authorization": "Bearer " + g.key})
	var usage struct {
		Total  struct{ Requests, CompletionTokens int64 } `json:"total"`
		ByTier map[string]struct{ Requests int64 }        `json:"by_tier"`
		Data   []struct{ Day string }                     `json:"data"`
	}
	_ = json.Unmarshal(ub, &usage)
	if code != 200 || usage.Total.Requests != 3 || usage.ByTier["nano"].Requests != 3 || len(usage.Data) != 7 {
		t.Fatalf("usage: %d %s", code, ub)
	}
	for _, q := range []string{"0", "91", "x"} {
		if code, _ := get(t, g.gateway+"/v1/usage?days="+q, map[string]string{"Authorization": "Bearer " + g.key}); code != 400 {
			t.Fatalf("days=%s: %d", q, code)
		}
	}
	code, hb := get(t, g.gateway+"/healthz", nil)
	if code != 200 || !strings.Contains(string(hb), `"tier_count":4`) || !strings.Contains(string(hb), `"payment_provider"`) || !strings.Contains(string(hb), `"cache"`) {
		t.Fatalf("healthz: %d %s", code, hb)
	}
	_ = upstreamtest.Behavior{}
}
