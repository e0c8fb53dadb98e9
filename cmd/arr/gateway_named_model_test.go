package main_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// TestNamedModelFailsOverToItselfOnly: a catalog model id named in
// `model` is answered by that model, or by the same model served
// elsewhere at no higher price (a catalog entry with the same vendor and
// upstream_model), never by another model: with every copy down the
// answer is 502 upstream_unavailable and no other model is called. A key
// whose models limit leaves no tier that clears the request's quality
// floor is refused naming that limit (403 model_not_allowed), not the
// cost ceiling.
func TestNamedModelFailsOverToItselfOnly(t *testing.T) {
	e := newEnv(t)
	home, away := upstreamtest.Start(t), upstreamtest.Start(t)
	cat := map[string]any{"tiers": []any{
		map[string]any{"name": "nano", "models": []any{
			catModel("gpt-4.1-nano", "openai", "gpt-4.1-nano", home.URL, 0.0001, 0.0004, 0.8),
			catModel("gpt-4.1-nano-eu", "openai", "gpt-4.1-nano", away.URL, 0.0001, 0.0004, 0.8),
			catModel("gpt-4.1-nano-priority", "openai", "gpt-4.1-nano", away.URL, 0.0002, 0.0008, 0.8),
			catModel("gemini-2.0-flash-lite", "google", "gemini-2.0-flash-lite", home.URL, 0.000075, 0.0003, 0.8),
		}},
		map[string]any{"name": "small", "models": []any{catModel("gpt-4.1-mini", "openai", "gpt-4.1-mini", home.URL, 0.0004, 0.0016, 0.85)}},
		map[string]any{"name": "mid", "models": []any{catModel("gpt-4.1", "openai", "gpt-4.1", home.URL, 0.002, 0.008, 0.91)}},
		map[string]any{"name": "high", "models": []any{catModel("o3", "openai", "o3", home.URL, 0.002, 0.008, 0.96)}},
	}}
	b, _ := json.Marshal(cat)
	file := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e.extraEnv = append(e.extraEnv, "ARR_CATALOG="+file, "ARR_TEST_UPSTREAM_KEY=sk-test", "ARR_UPSTREAM_TIMEOUT=2s")
	e.up()
	e.createAccount("named@example.com", "enterprise")
	key := e.mint("named@example.com", "gateway").Secret
	ask := func(body map[string]any) limitAnswer {
		return postKeyed(t, e.gateway+"/v1/chat/completions", key, body)
	}
	hello := map[string]any{"model": "gpt-4.1-nano", "messages": userMsg("Say hello")}

	// The named model answers when it can.
	if a := ask(hello); a.status != 200 || !strings.Contains(a.body, `"model":"gpt-4.1-nano"`) {
		t.Fatalf("gpt-4.1-nano, all up: %d %s", a.status, a.body)
	}
	// Down at home: the same model elsewhere, at the same price, answers.
	home.Set("gpt-4.1-nano", upstreamtest.Behavior{Status: 500})
	a := ask(hello)
	if a.status != 200 || !strings.Contains(a.body, `"model":"gpt-4.1-nano-eu"`) {
		t.Fatalf("gpt-4.1-nano down at home: %d %s; want the answer of gpt-4.1-nano-eu", a.status, a.body)
	}
	// Down everywhere: 502, and no other model (nor the dearer copy) is called.
	away.Set("gpt-4.1-nano", upstreamtest.Behavior{Status: 500})
	a = ask(hello)
	if a.status != http.StatusBadGateway || a.code != "upstream_unavailable" {
		t.Fatalf("gpt-4.1-nano down everywhere: %d %s; want 502 upstream_unavailable", a.status, a.body)
	}
	for _, m := range []string{"gemini-2.0-flash-lite", "gpt-4.1-mini", "gpt-4.1", "o3"} {
		if n := home.Calls(m); n != 0 {
			t.Errorf("a request naming gpt-4.1-nano reached %s %d times", m, n)
		}
	}
	if n := away.Calls("gpt-4.1-nano"); n != 2 {
		t.Errorf("the copies of gpt-4.1-nano elsewhere were called %d times; want 2 (gpt-4.1-nano-eu twice, the dearer copy never)", n)
	}

	// A key limited to nano asking auto for a floor only high clears.
	var k mintedKey
	e.mustArr(&k, "keys", "mint", "--email", "named@example.com", "--service", "gateway", "--models", "nano", "--json")
	r := postKeyed(t, e.gateway+"/v1/chat/completions", k.Secret, map[string]any{"messages": userMsg("Say hello"), "quality_floor": 0.93})
	if r.status != http.StatusForbidden || r.code != "model_not_allowed" || r.typ != "permission_error" ||
		!strings.Contains(r.body, "models limit") || !strings.Contains(r.body, "nano") || strings.Contains(r.body, "max_cost_usd") {
		t.Fatalf("a nano key asking for a floor only high clears: %d %s; want 403 model_not_allowed naming the key's models limit, not the cost ceiling", r.status, r.body)
	}
}

func catModel(id, vendor, upstream, base string, in, out, quality float64) map[string]any {
	return map[string]any{"id": id, "vendor": vendor, "upstream_model": upstream, "base_url": base, "api_key_env": "ARR_TEST_UPSTREAM_KEY",
		"input_usd_per_1k": in, "output_usd_per_1k": out, "quality": quality, "context_window": 128000}
}
