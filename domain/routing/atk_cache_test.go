package routing_test

import (
	"errors"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
)

// atkCatalog is a one-model catalog whose model has the given extra
// (prompt-cache) prices.
func atkCatalog(t *testing.T, extra string) *routing.Catalog {
	t.Helper()
	c, err := routing.ParseCatalog([]byte(`{"tiers":[{"name":"nano","models":[{"id":"m","vendor":"v","base_url":"http://127.0.0.1:9/v1",
		"input_usd_per_1k":0.003,"output_usd_per_1k":0.015` + extra + `,"quality":0.8,"context_window":200000}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAtkCeilingHoldsWhateverThePromptCacheDoes: max_cost_usd is a hard
// ceiling; the router caps max_tokens so that prompt plus output cannot
// cost more. It prices the prompt at the input price only, so a prompt
// the upstream writes to its cache (cache-write price 1.25x input, the
// shipped Anthropic prices) or reads at a cached price above input (which
// the catalog accepts) costs more than the ceiling the client set.
func TestAtkCeilingHoldsWhateverThePromptCacheDoes(t *testing.T) {
	for _, tc := range []struct {
		name, extra string
		tokens      func(prompt, out int64) routing.Tokens
	}{
		{"cache writes dearer than input (shipped Anthropic prices)", `,"cached_input_usd_per_1k":0.0003,"cache_write_usd_per_1k":0.00375`,
			func(p, o int64) routing.Tokens { return routing.Tokens{Prompt: p, CacheWrite: p, Completion: o} }},
		{"cached reads priced above input (accepted by ParseCatalog)", `,"cached_input_usd_per_1k":0.006`,
			func(p, o int64) routing.Tokens { return routing.Tokens{Prompt: p, CacheRead: p, Completion: o} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := atkCatalog(t, tc.extra)
			const prompt, ceiling = 100_000, 400_000 // 100k prompt tokens, $0.40
			d, err := routing.Route(c, nil, routing.Request{Model: "m", QualityFloor: 0.5, InputTokens: prompt, MaxCostMicro: ceiling})
			var de *domain.Error
			if errors.As(err, &de) && de.Code == "max_cost_exceeded" {
				return // refused: the ceiling holds
			}
			if err != nil {
				t.Fatal(err)
			}
			cand := d.Candidates[0]
			if cand.MaxTokens <= 0 {
				t.Fatalf("no output cap under the ceiling: %+v", cand)
			}
			if got := cand.Model.Cost(tc.tokens(prompt, cand.MaxTokens)); got > ceiling {
				t.Errorf("prompt %d tokens with output capped at %d costs %d µ$, over the client's max_cost_usd %d µ$", prompt, cand.MaxTokens, got, ceiling)
			}
		})
	}
}

// TestAtkCatalogCachePriceNeverNegative: the catalog refuses a negative
// cache price, but checks the float before converting it: a large one
// overflows int64 in perM and becomes a negative price (on amd64,
// math.MinInt64), so cached tokens credit the key instead of costing.
func TestAtkCatalogCachePriceNeverNegative(t *testing.T) {
	for _, extra := range []string{`,"cached_input_usd_per_1k":1e10`, `,"cache_write_usd_per_1k":1e10`} {
		c, err := routing.ParseCatalog([]byte(`{"tiers":[{"name":"nano","models":[{"id":"m","vendor":"v","base_url":"http://127.0.0.1:9/v1",
			"input_usd_per_1k":0.003,"output_usd_per_1k":0.015` + extra + `,"quality":0.8,"context_window":200000}]}]}`))
		if err != nil {
			continue // refused: fine
		}
		m, _ := c.Model("m")
		if m.CachedInputPerM < 0 || m.CacheWritePerM < 0 {
			t.Errorf("%s accepted as cached %d, write %d µ$/M", extra, m.CachedInputPerM, m.CacheWritePerM)
		}
		tk := routing.Tokens{Prompt: 1000, CacheRead: 500, CacheWrite: 500}
		if cost := m.Cost(tk); cost < 0 {
			t.Errorf("%s: Cost(%+v) = %d µ$, a credit", extra, tk, cost)
		}
	}
}

// TestAtkMaxCostDoesNotOverflow: a catalog may name an absurd cache-write
// price (no upper bound is checked); MaxCost then overflows int64 and the
// reservation is negative, admitting a request whatever the key's budget.
func TestAtkMaxCostDoesNotOverflow(t *testing.T) {
	// The catalog now refuses a price over $1000 per 1k tokens; a Model
	// made in code with an absurd price must still not wrap.
	if _, err := routing.ParseCatalog([]byte(`{"tiers":[{"name":"nano","models":[{"id":"m","vendor":"v","base_url":"http://127.0.0.1:9/v1",
			"input_usd_per_1k":0.003,"output_usd_per_1k":0.015,"cache_write_usd_per_1k":100000,"quality":0.8,"context_window":200000}]}]}`)); err == nil {
		t.Error("a cache-write price of $100000 per 1k tokens parsed")
	}
	m := routing.Model{ID: "m", InputPerM: 3_000_000, OutputPerM: 15_000_000, CacheWritePerM: 100_000 * 1e9, ContextWindow: 200_000}
	const prompt = 150_000 // within the 200k context window
	if got := m.MaxCost(prompt, 1); got < 0 {
		t.Errorf("MaxCost(%d, 1) = %d µ$ with cache-write price %d µ$/M: overflowed", prompt, got, m.CacheWritePerM)
	}
	cost, _ := routing.Reservation([]routing.Candidate{{Model: m}}, 0, prompt)
	if cost < 0 {
		t.Errorf("Reservation = %d µ$: negative", cost)
	}
}

// TestAtkCostNeverNegative: Clamped keeps the cache counts in [0, Prompt]
// and its doc says negative counts are handled, but a negative
// prompt_tokens (or completion_tokens) from an upstream is left as is and
// Cost is negative: settling credits the key's budget.
func TestAtkCostNeverNegative(t *testing.T) {
	m := atkCatalog(t, `,"cached_input_usd_per_1k":0.0003`)
	mm, _ := m.Model("m")
	for _, tk := range []routing.Tokens{{Prompt: -1_000_000, Completion: 10}, {Prompt: 10, Completion: -1_000_000, CacheRead: 5}} {
		if got := mm.Cost(tk); got < 0 {
			t.Errorf("Cost(%+v) = %d µ$: negative", tk, got)
		}
	}
}
