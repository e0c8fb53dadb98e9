package main_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

func (g *gw) postKeyed(t testing.TB, path, key string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, g.gateway+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// TestGatewayFeedbackCacheAndRebuild: bad feedback on nano for easy
// requests makes auto stop choosing nano for them (and only for them);
// the cache answers repeats at no cost; brand_pref needs Pro; the cost
// ceiling caps max_tokens upstream; the usage rollup, the audit entries
// and the tier quality equal themselves after a rebuild from the log.
func TestGatewayFeedbackCacheAndRebuild(t *testing.T) {
	g := newGateway(t, "enterprise")
	g.createAccount("free@example.com", "free")
	freeKey := g.mint("free@example.com", "gateway").Secret

	// Easy requests (low band) go to nano.
	var hashes []string
	for i := 0; i < 12; i++ {
		code, _, out := g.chat(t, map[string]any{"messages": userMsg("Say hello"), "temperature": 0.5})
		r := routingOf(t, out)
		if code != 200 || r["tier"] != "nano" {
			t.Fatalf("easy request %d: %d %v", i, code, r)
		}
		hashes = append(hashes, r["audit_hash"].(string))
	}
	// A mid-band request (code and reasoning cues) goes to small.
	mid := map[string]any{"messages": userMsg("Explain why this Go func deadlocks, step by step:\n```go\nfunc f(){ ch := make(chan int); ch <- 1 }\n```")}
	_, _, out := g.chat(t, mid)
	if r := routingOf(t, out); r["tier"] != "small" {
		t.Fatalf("mid-band request: %v", r)
	}

	// Feedback: only on one's own completions, ratings 1 to 5.
	if code, out := g.postKeyed(t, "/v1/feedback", freeKey, map[string]any{"audit_hash": hashes[0], "rating": 1}); code != 404 {
		t.Fatalf("feedback on another account's completion: %d %v", code, out)
	}
	if code, out := g.postKeyed(t, "/v1/feedback", g.key, map[string]any{"audit_hash": hashes[0], "rating": 7}); code != 400 {
		t.Fatalf("rating 7: %d %v", code, out)
	}
	for _, h := range hashes {
		code, out := g.postKeyed(t, "/v1/feedback", g.key, map[string]any{"audit_hash": h, "rating": 1, "notes": "wrong answer"})
		if code != 201 || out["tier"] != "nano" || out["difficulty_band"] != "low" {
			t.Fatalf("feedback: %d %v", code, out)
		}
	}
	// auto stops choosing nano for easy requests (the router re-reads the
	// tier quality every second) ...
	eventually(t, 10*time.Second, "auto leaves nano after bad feedback", func() bool {
		_, _, out := g.chat(t, map[string]any{"messages": userMsg("Say hello"), "temperature": 0.5})
		return routingOf(t, out)["tier"] == "small"
	})
	// ... while asking for nano by name still works.
	if _, _, out := g.chat(t, map[string]any{"messages": userMsg("Say hello"), "model": "nano"}); routingOf(t, out)["tier"] != "nano" {
		t.Fatalf("model nano: %v", out)
	}

	// Cache: automatic for temperature 0 without tools.
	q := map[string]any{"messages": userMsg("What is the capital of France?"), "temperature": 0}
	_, _, first := g.chat(t, q)
	model := routingOf(t, first)["model"].(string)
	calls := g.up.Calls(model)
	code, h, second := g.chat(t, q)
	r := routingOf(t, second)
	if code != 200 || r["cache_hit"] != true || r["cost_usd"] != float64(0) || h.Get("X-Arr-Cache-Hit") != "true" || g.up.Calls(model) != calls {
		t.Fatalf("repeat at temperature 0: %v (upstream calls %d -> %d)", r, calls, g.up.Calls(model))
	}
	if r["audit_hash"] == routingOf(t, first)["audit_hash"] {
		t.Fatal("a cache hit reused the audit hash of the original")
	}
	// ... replayed as a stream too.
	qs := map[string]any{"messages": q["messages"], "temperature": 0, "stream": true, "stream_options": map[string]any{"include_usage": true}}
	resp, evs := g.chatStream(t, qs)
	var last map[string]any
	_ = json.Unmarshal([]byte(evs[len(evs)-2].data), &last)
	if resp.Header.Get("X-Arr-Cache-Hit") != "true" || routingOf(t, last)["cache_hit"] != true || evs[len(evs)-1].data != "[DONE]" || g.up.Calls(model) != calls {
		t.Fatalf("stream from cache: %v %v", resp.Header, evs)
	}
	// Opt-in with the header; opt-out wins over temperature 0.
	warm := map[string]any{"messages": userMsg("Name a colour"), "temperature": 0.9}
	g.chat(t, warm, "X-Arr-Cache", "on")
	if _, _, out := g.chat(t, warm, "X-Arr-Cache", "on"); routingOf(t, out)["cache_hit"] != true {
		t.Fatalf("X-Arr-Cache: on: %v", out)
	}
	if _, _, out := g.chat(t, q, "X-Arr-Cache", "off"); routingOf(t, out)["cache_hit"] != false {
		t.Fatalf("X-Arr-Cache: off: %v", out)
	}

	// brand_pref: Pro and above.
	code, _, out = g.chat(t, map[string]any{"messages": userMsg("Say hello"), "brand_pref": "google"})
	if r := routingOf(t, out); code != 200 || r["vendor"] != "google" {
		t.Fatalf("brand_pref google on enterprise: %d %v", code, out)
	}
	g.key, freeKey = freeKey, g.key
	code, _, out = g.chat(t, map[string]any{"messages": userMsg("Say hello"), "brand_pref": "google"})
	g.key, freeKey = freeKey, g.key
	if typ, c, _ := errorOf(out); code != 403 || c != "brand_pref_requires_pro" || typ != "permission_error" {
		t.Fatalf("brand_pref on free: %d %v", code, out)
	}

	// The ceiling caps max_tokens upstream so the worst case fits it.
	// gpt-4.1-nano's estimate (256 output tokens at $0.0004/1k) is over
	// $0.0001, gemini-2.0-flash-lite's ($0.0003/1k) is not.
	code, _, out = g.chat(t, map[string]any{"messages": userMsg("Say hello"), "model": "nano", "max_cost_usd": 0.0001})
	sent := g.up.LastRequest("gemini-2.0-flash-lite")
	if code != 200 || routingOf(t, out)["model"] != "gemini-2.0-flash-lite" || sent["max_tokens"] == nil {
		t.Fatalf("ceiling: %d %v, upstream got %v", code, out, sent)
	}
	if mt := sent["max_tokens"].(float64); mt < 256 || mt*0.0003/1000 > 0.0001 {
		t.Fatalf("max_tokens %v for a $0.0001 ceiling at $0.0003 per 1k output tokens", mt)
	}

	// Read models equal themselves after a rebuild from the log.
	snapshot := func() (string, string) {
		_, u := get(t, g.gateway+"/v1/usage?days=3", map[string]string{"Authorization": "Bearer " + g.key})
		_, a := get(t, g.gateway+"/v1/audit/"+hashes[5], g.owner())
		return string(u), string(a)
	}
	u1, a1 := snapshot()
	for _, p := range []string{"gateway_usage", "audit", "tier_quality"} {
		g.mustArr(nil, "projections", "rebuild", p)
	}
	u2, a2 := snapshot()
	if u1 != u2 || a1 != a2 {
		t.Fatalf("rebuild changed the read models:\nusage before %s\nafter  %s\naudit before %s\nafter  %s", u1, u2, a1, a2)
	}
	var usage struct {
		Total struct {
			Requests  int64 `json:"requests"`
			CacheHits int64 `json:"cache_hits"`
		} `json:"total"`
	}
	_ = json.Unmarshal([]byte(u2), &usage)
	if usage.Total.Requests < 20 || usage.Total.CacheHits != 3 {
		t.Fatalf("usage after rebuild: %s", u2)
	}
	// The router still avoids nano for easy requests after the rebuild.
	eventually(t, 10*time.Second, "routing after the rebuild", func() bool {
		_, _, out := g.chat(t, map[string]any{"messages": userMsg("Say hello"), "temperature": 0.5})
		return routingOf(t, out)["tier"] == "small"
	})
}
