package main_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// TestGatewayBillsCachedPromptTokens: through `arr serve`, a request
// whose upstream reports usage.prompt_tokens_details.cached_tokens pays
// the model's cached-input price for those prompt tokens (gpt-4.1: $0.50
// per M instead of $2), replied and streamed: routing's cost_usd and
// cache_read_tokens, the audit entry, the key's budget spend and
// GET /v1/usage agree, and a streaming client's closing usage carries
// prompt_tokens_details.cached_tokens.
func TestGatewayBillsCachedPromptTokens(t *testing.T) {
	g := newGateway(t, "enterprise")
	const cached = 1024
	g.up.Set("gpt-4.1", upstreamtest.Behavior{CachedTokens: cached})
	var k mintedKey
	g.mustArr(&k, "keys", "mint", "--email", "gw-enterprise@example.com", "--service", "gateway", "--json",
		"--max-budget-usd", "5", "--budget-period", "day")
	g.key = k.Secret
	prefix := strings.Repeat("a long repeated system prefix ", 300)

	var total int64
	for _, stream := range []bool{false, true} {
		body := map[string]any{"model": "gpt-4.1", "messages": userMsg(prefix + fmt.Sprint(stream)), "stream": stream, "max_tokens": 64}
		var out map[string]any
		if stream {
			body["stream_options"] = map[string]any{"include_usage": true}
			resp, evs := g.chatStream(t, body)
			if resp.StatusCode != http.StatusOK || len(evs) < 2 || evs[len(evs)-1].data != "[DONE]" {
				t.Fatalf("stream: %d, %d events", resp.StatusCode, len(evs))
			}
			if err := json.Unmarshal([]byte(evs[len(evs)-2].data), &out); err != nil {
				t.Fatalf("closing chunk: %v", err)
			}
		} else {
			code, _, o := g.chat(t, body)
			if code != http.StatusOK {
				t.Fatalf("chat: %d %v", code, o)
			}
			out = o
		}
		var u struct {
			Prompt     int64 `json:"prompt_tokens"`
			Completion int64 `json:"completion_tokens"`
			Details    struct {
				Cached int64 `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		}
		raw, _ := json.Marshal(out["usage"])
		if json.Unmarshal(raw, &u) != nil || u.Details.Cached != cached || u.Prompt <= cached {
			t.Fatalf("stream %v: usage %s; want %d cached of the prompt tokens", stream, raw, cached)
		}
		// gpt-4.1: $2 per M input, $0.50 per M cached input, $8 per M output; rounded up.
		want := ((u.Prompt-cached)*2_000_000 + cached*500_000 + u.Completion*8_000_000 + 999_999) / 1_000_000
		ri := routingOf(t, out)
		if got := int64(math.Round(ri["cost_usd"].(float64) * 1e6)); got != want || ri["cache_read_tokens"] != float64(cached) {
			t.Errorf("stream %v: routing %v; want cost %d µ$ and %d cache_read_tokens", stream, ri, want, cached)
		}
		v, _ := getAudit(t, g.gateway, ri["audit_hash"].(string), g.owner())
		var p struct {
			CacheRead int64 `json:"cache_read_tokens"`
			Cost      int64 `json:"cost_micro_usd"`
		}
		if json.Unmarshal(v.Payload, &p) != nil || p.CacheRead != cached || p.Cost != want {
			t.Errorf("stream %v: audit payload %s; want %d cache_read_tokens at %d µ$", stream, v.Payload, cached, want)
		}
		total += want
	}

	eventually(t, 5*time.Second, "the key's budget spend and GET /v1/usage show the cached price", func() bool {
		var keys []keyListing
		g.mustArr(&keys, "keys", "list", "--email", "gw-enterprise@example.com", "--json")
		spent := int64(-1)
		for _, l := range keys {
			if l.ID == k.ID && l.Spend != nil {
				spent = int64(math.Round(l.Spend.SpentUSD * 1e6))
			}
		}
		_, body := get(t, g.gateway+"/v1/usage?days=1", g.owner())
		var r struct {
			Total struct {
				CacheRead int64 `json:"cache_read_tokens"`
				Cost      int64 `json:"cost_micro_usd"`
			} `json:"total"`
		}
		_ = json.Unmarshal(body, &r)
		if spent != total || r.Total.CacheRead != 2*cached || r.Total.Cost != total {
			t.Logf("spent %d µ$ (want %d); usage %s", spent, total, body)
			return false
		}
		return true
	})
}
