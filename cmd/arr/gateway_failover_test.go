package main_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// TestGatewayFailover: a 500 or a timeout of the first upstream is
// answered by the next (routing.model names it), a whole tier down moves
// up a tier but never past the cost ceiling, repeated failures open the
// upstream's breaker, and a stream cut mid-way ends with finish_reason
// "error" and an SSE error event.
func TestGatewayFailover(t *testing.T) {
	g := newGateway(t, "enterprise")
	hello := map[string]any{"messages": userMsg("Say hello")}

	answeredBy := func(t *testing.T, body map[string]any, model string, attempts float64) map[string]any {
		t.Helper()
		code, _, out := g.chat(t, body)
		if code != http.StatusOK {
			t.Fatalf("%d %v", code, out)
		}
		r := routingOf(t, out)
		if r["model"] != model || r["attempts"] != attempts {
			t.Fatalf("routing %v: want model %s after %v attempts", r, model, attempts)
		}
		return r
	}

	// 1. The first nano model answers 500: the second nano model answers.
	g.up.Set("gpt-4.1-nano", upstreamtest.Behavior{Status: 500})
	answeredBy(t, hello, "gemini-2.0-flash-lite", 2)

	// 2. It hangs past ARR_UPSTREAM_TIMEOUT (2s): the second answers.
	g.up.Set("gpt-4.1-nano", upstreamtest.Behavior{Hang: true})
	began := time.Now()
	answeredBy(t, hello, "gemini-2.0-flash-lite", 2)
	if took := time.Since(began); took < 2*time.Second || took > 10*time.Second {
		t.Fatalf("timeout failover took %s; the upstream timeout is 2s", took)
	}

	// 3. A third failure in a row (429) opens its breaker (3 failures):
	// after that it is not called at all.
	g.up.Set("gpt-4.1-nano", upstreamtest.Behavior{Status: 429})
	answeredBy(t, hello, "gemini-2.0-flash-lite", 2)
	calls := g.up.Calls("gpt-4.1-nano")
	g.up.Set("gpt-4.1-nano", upstreamtest.Behavior{}) // healthy again, but the breaker stays open for a minute
	answeredBy(t, hello, "gemini-2.0-flash-lite", 2)
	if got := g.up.Calls("gpt-4.1-nano"); got != calls {
		t.Fatalf("the open breaker let %d calls through", got-calls)
	}
	_, hb := get(t, g.gateway+"/healthz", nil)
	var health struct {
		Routing struct {
			Breakers map[string]string `json:"breakers"`
		} `json:"routing"`
	}
	_ = json.Unmarshal(hb, &health)
	if health.Routing.Breakers["gpt-4.1-nano"] != "open" || health.Routing.Breakers["gemini-2.0-flash-lite"] != "closed" {
		t.Fatalf("breakers in /healthz: %s", hb)
	}

	// 4. The whole nano tier down: the next tier up answers.
	g.up.Set("gemini-2.0-flash-lite", upstreamtest.Behavior{Status: 503})
	r := answeredBy(t, hello, "gpt-4.1-mini", 3)
	if r["tier"] != "small" {
		t.Fatalf("tier %v, want small", r["tier"])
	}
	// ... but not past the ceiling: with a budget only nano fits, 502.
	small := g.up.Calls("gpt-4.1-mini")
	code, _, out := g.chat(t, map[string]any{"messages": userMsg("Say hello"), "max_cost_usd": 0.0002})
	if typ, c, _ := errorOf(out); code != http.StatusBadGateway || c != "upstream_unavailable" || typ != "api_error" {
		t.Fatalf("nano down under a nano-only ceiling: %d %v", code, out)
	}
	if g.up.Calls("gpt-4.1-mini") != small {
		t.Fatal("failover called a tier over the cost ceiling")
	}

	// 5. A request the upstream refuses as such (400) is not retried
	// elsewhere; its error passes through.
	g.up.Set("gpt-4.1-mini", upstreamtest.Behavior{Status: 400})
	before := g.up.Calls("gpt-4.1")
	code, _, out = g.chat(t, map[string]any{"messages": userMsg("x"), "model": "gpt-4.1-mini"})
	if code != http.StatusBadRequest || g.up.Calls("gpt-4.1") != before {
		t.Fatalf("upstream 400: %d %v", code, out)
	}
	g.up.Reset()

	// 6. A stream cut mid-way: chunks, then finish_reason "error" and an
	// SSE error event, never [DONE]; the audit entry says "cut".
	g.up.Set("gpt-4.1-mini", upstreamtest.Behavior{CutAfter: 3})
	resp, evs := g.chatStream(t, map[string]any{"model": "gpt-4.1-mini", "stream": true,
		"messages": userMsg("Tell me a long story about a lighthouse keeper and the sea")})
	if resp.StatusCode != http.StatusOK || len(evs) < 3 {
		t.Fatalf("cut stream: %d %v", resp.StatusCode, evs)
	}
	lastEv := evs[len(evs)-1]
	if lastEv.event != "error" || !strings.Contains(lastEv.data, "upstream_stream_cut") {
		t.Fatalf("the cut stream does not end with an SSE error event: %v", evs)
	}
	var final map[string]any
	_ = json.Unmarshal([]byte(evs[len(evs)-2].data), &final)
	choice := final["choices"].([]any)[0].(map[string]any)
	if choice["finish_reason"] != "error" {
		t.Fatalf("chunk before the error event: %v", final)
	}
	for _, e := range evs {
		if e.data == "[DONE]" {
			t.Fatal("a cut stream sent [DONE]")
		}
	}
	hash := routingOf(t, final)["audit_hash"].(string)
	_, ab := get(t, g.gateway+"/v1/audit/"+hash, g.owner())
	if !strings.Contains(string(ab), `"outcome":"cut"`) {
		t.Fatalf("audit entry of the cut stream: %s", ab)
	}

	// The routing series on /metrics.
	_, mb := get(t, g.gateway+"/metrics", nil)
	for _, series := range []string{`arr_gateway_upstream_failures_total{model="gpt-4.1-nano"} `,
		`arr_gateway_completions_total{cache="miss",model="gpt-4.1-mini",outcome="cut",tier="small"} 1`,
		`arr_gateway_upstream_first_byte_seconds_count{model="gemini-2.0-flash-lite"}`} {
		if !strings.Contains(string(mb), series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
}
