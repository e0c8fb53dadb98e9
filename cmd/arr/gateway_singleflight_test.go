package main_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// burst sends n identical chat completions at once and returns their
// statuses and bodies.
func (g *gw) burst(t *testing.T, n int, body map[string]any) ([]int, []map[string]any) {
	t.Helper()
	codes, outs := make([]int, n), make([]map[string]any, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, outs[i] = g.chat(t, body)
		}()
	}
	wg.Wait()
	return codes, outs
}

// TestGatewayCacheIsSingleFlight: 20 concurrent identical cacheable
// requests (temperature 0) make one upstream call; the one that made it is
// a miss with a cost, the 19 others are cache hits with no cost, every one
// has its own audit entry, and the cache's stats count them so. When that
// one call fails, every waiter gets the failure and no candidate is called
// more than once; the next identical request calls the upstream again.
func TestGatewayCacheIsSingleFlight(t *testing.T) {
	const n = 20
	g := newGateway(t, "enterprise")
	// Every reply takes a second: the 20 requests all arrive while the
	// first is still upstream.
	g.up.Set("", upstreamtest.Behavior{Latency: time.Second})
	q := map[string]any{"messages": userMsg("What is the boiling point of water at sea level?"), "temperature": 0}
	codes, outs := g.burst(t, n, q)
	var model, content string
	misses, hashes := 0, map[string]bool{}
	for i, out := range outs {
		if codes[i] != http.StatusOK {
			t.Fatalf("request %d: %d %v", i, codes[i], out)
		}
		r := routingOf(t, out)
		model = r["model"].(string)
		hashes[r["audit_hash"].(string)] = true
		if r["cache_hit"] == false {
			misses++
		} else if r["cost_usd"] != float64(0) || r["attempts"] != float64(0) {
			t.Fatalf("a follower is not a free cache hit: %v", r)
		}
		msg, _ := json.Marshal(out["choices"])
		if content == "" {
			content = string(msg)
		} else if string(msg) != content {
			t.Fatalf("request %d got %s, another got %s", i, msg, content)
		}
	}
	if calls := g.up.Calls(model); calls != 1 || misses != 1 {
		t.Fatalf("%d concurrent identical requests: %d upstream calls to %s and %d misses; want 1 and 1", n, calls, model, misses)
	}
	if len(hashes) != n {
		t.Fatalf("%d audit entries for %d requests", len(hashes), n)
	}
	_, raw := get(t, g.gateway+"/healthz", nil)
	var h struct {
		Routing struct {
			Cache struct {
				Hits      int64 `json:"hits"`
				Misses    int64 `json:"misses"`
				Coalesced int64 `json:"coalesced"`
			} `json:"cache"`
		} `json:"routing"`
	}
	if err := json.Unmarshal(raw, &h); err != nil || h.Routing.Cache.Hits != n-1 || h.Routing.Cache.Misses != 1 || h.Routing.Cache.Coalesced != n-1 {
		t.Fatalf("/healthz cache after the burst: %s", raw)
	}
	var usage struct {
		Total struct {
			Requests  int64 `json:"requests"`
			CacheHits int64 `json:"cache_hits"`
		} `json:"total"`
	}
	eventually(t, 20*time.Second, "every request in the usage rollup", func() bool {
		_, u := get(t, g.gateway+"/v1/usage?days=1", g.owner())
		return json.Unmarshal(u, &usage) == nil && usage.Total.Requests == n
	})
	if usage.Total.CacheHits != n-1 {
		t.Fatalf("usage: %+v, want %d requests of which %d cache hits", usage.Total, n, n-1)
	}

	// A failing call is shared too (each candidate is tried once, not once
	// per request), and forgotten once it ends.
	_, raw = get(t, g.gateway+"/v1/models", nil)
	var models struct {
		Data []struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &models); err != nil {
		t.Fatalf("/v1/models: %s: %v", raw, err)
	}
	before := map[string]int{}
	for _, m := range models.Data {
		if m.Kind == "model" {
			before[m.ID] = g.up.Calls(m.ID)
		}
	}
	g.up.Set("", upstreamtest.Behavior{Latency: 500 * time.Millisecond, Status: http.StatusInternalServerError})
	q2 := map[string]any{"messages": userMsg("What is the melting point of ice?"), "temperature": 0}
	codes, outs = g.burst(t, 10, q2)
	for i, out := range outs {
		if _, code, _ := errorOf(out); codes[i] != http.StatusBadGateway || code != "upstream_unavailable" {
			t.Fatalf("request %d while every upstream fails: %d %v", i, codes[i], out)
		}
	}
	tried := 0
	for m, calls := range before {
		switch d := g.up.Calls(m) - calls; {
		case d > 1:
			t.Fatalf("10 identical failing requests called %s %d times; want at most once", m, d)
		case d == 1:
			tried++
		}
	}
	if tried == 0 {
		t.Fatal("10 identical failing requests called no upstream")
	}
	g.up.Reset()
	code, _, out := g.chat(t, q2)
	if code != http.StatusOK || routingOf(t, out)["cache_hit"] != false {
		t.Fatalf("the same request after the failure: %d %v", code, out)
	}
}
