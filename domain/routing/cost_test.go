package routing_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
)

// sonnetLike is priced as Anthropic prices Claude Sonnet 4: $3 input,
// $0.30 cache reads, $3.75 cache writes and $15 output per million tokens.
var sonnetLike = routing.Model{ID: "s", InputPerM: 3_000_000, CachedInputPerM: 300_000, CacheWritePerM: 3_750_000, OutputPerM: 15_000_000}

func TestCostPricesEachKindOfToken(t *testing.T) {
	tests := []struct {
		name string
		t    routing.Tokens
		want routing.MicroUSD
	}{
		{"plain input and output", routing.Tokens{Prompt: 1000, Completion: 100}, 3_000 + 1_500},
		{"cache reads at the cached price", routing.Tokens{Prompt: 1000, Completion: 100, CacheRead: 800}, 200*3 + 800*0.3 + 1_500},
		{"cache writes at the cache-write price", routing.Tokens{Prompt: 1000, Completion: 100, CacheWrite: 1000}, 3_750 + 1_500},
		{"reads, writes and plain input together", routing.Tokens{Prompt: 1000, CacheRead: 500, CacheWrite: 300}, 200*3 + 500*0.3 + 300*3.75},
		{"rounded up to the micro-dollar", routing.Tokens{Prompt: 1, CacheRead: 1}, 1},
		{"nothing costs nothing", routing.Tokens{}, 0},
		{"more cached tokens than prompt tokens: the whole prompt is cached", routing.Tokens{Prompt: 100, CacheRead: 1_000_000}, 30},
		{"writes are kept within what the reads left of the prompt", routing.Tokens{Prompt: 100, CacheRead: 60, CacheWrite: 1000}, 18 + 150},
		{"negative cache counts are none", routing.Tokens{Prompt: 100, CacheRead: -50, CacheWrite: -50}, 300},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sonnetLike.Cost(tc.t); got != tc.want {
				t.Errorf("Cost(%+v) = %d µ$, want %d", tc.t, got, tc.want)
			}
			if bound := sonnetLike.MaxCost(tc.t.Prompt, tc.t.Completion); sonnetLike.Cost(tc.t) > bound {
				t.Errorf("Cost(%+v) over MaxCost %d", tc.t, bound)
			}
		})
	}
}

func TestMaxCostTakesTheDearestInputPrice(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    routing.Model
		want routing.MicroUSD
	}{
		{"cache writes dearer than input", sonnetLike, 3_750 + 1_500},
		{"no cache prices: the input price", routing.Model{InputPerM: 3_000_000, OutputPerM: 15_000_000}, 3_000 + 1_500},
		{"a cached price above input (a catalog may say so)", routing.Model{InputPerM: 1_000_000, CachedInputPerM: 2_000_000, CacheWritePerM: 1_000_000, OutputPerM: 15_000_000}, 2_000 + 1_500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.m.MaxCost(1000, 100); got != tc.want {
				t.Errorf("MaxCost = %d µ$, want %d", got, tc.want)
			}
		})
	}
}

func TestCatalogCachePrices(t *testing.T) {
	model := func(extra string) string {
		return `{"tiers":[{"name":"nano","models":[{"id":"m","vendor":"v","base_url":"http://127.0.0.1:9/v1",
			"input_usd_per_1k":0.003,"output_usd_per_1k":0.015` + extra + `,"quality":0.8,"context_window":200000}]}]}`
	}
	tests := []struct {
		name          string
		extra         string
		cached, write int64
		err           string
	}{
		{"both default to the input price", ``, 3_000_000, 3_000_000, ""},
		{"both named", `,"cached_input_usd_per_1k":0.0003,"cache_write_usd_per_1k":0.00375`, 300_000, 3_750_000, ""},
		{"cached only", `,"cached_input_usd_per_1k":0.0015`, 1_500_000, 3_000_000, ""},
		{"free cache reads", `,"cached_input_usd_per_1k":0`, 0, 3_000_000, ""},
		{"a negative cached price", `,"cached_input_usd_per_1k":-0.001`, 0, 0, "cached_input_usd_per_1k must be from 0 to"},
		{"a negative cache-write price", `,"cache_write_usd_per_1k":-0.001`, 0, 0, "cache_write_usd_per_1k must be from 0 to"},
		{"a misspelt field", `,"cache_read_usd_per_1k":0.0003`, 0, 0, "unknown field"},
		{"a price as a string", `,"cached_input_usd_per_1k":"0.0003"`, 0, 0, "cached_input_usd_per_1k"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := routing.ParseCatalog([]byte(model(tc.extra)))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m, _ := c.Model("m")
			if m.CachedInputPerM != tc.cached || m.CacheWritePerM != tc.write {
				t.Errorf("cached %d, write %d per M; want %d, %d", m.CachedInputPerM, m.CacheWritePerM, tc.cached, tc.write)
			}
		})
	}
}

// TestShippedCachePrices: the shipped catalog prices OpenAI's cached input
// at a quarter of input, Anthropic's cache reads at a tenth and its cache
// writes at 1.25 times input; embedding models price them as input.
func TestShippedCachePrices(t *testing.T) {
	c, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Models() {
		var cached, write int64
		switch m.Vendor {
		case "openai":
			cached, write = m.InputPerM/4, m.InputPerM
		case "anthropic":
			cached, write = m.InputPerM/10, m.InputPerM*5/4
		default:
			cached, write = m.InputPerM, m.InputPerM
		}
		if m.CachedInputPerM != cached || m.CacheWritePerM != write {
			t.Errorf("%s: cached %d, write %d per M; want %d, %d", m.ID, m.CachedInputPerM, m.CacheWritePerM, cached, write)
		}
	}
	for _, m := range c.EmbeddingModels() {
		if m.CachedInputPerM != m.InputPerM || m.CacheWritePerM != m.InputPerM {
			t.Errorf("embedding model %s: cache prices %d, %d; want its input price %d", m.ID, m.CachedInputPerM, m.CacheWritePerM, m.InputPerM)
		}
	}
}

// TestCeilingHoldsHoweverThePromptIsCached: with max_cost_usd, every
// candidate of every shipped model, the prompt written to the cache
// whole (the dearest way: Claude's cache writes are 1.25x input) and
// max_tokens output at its cap (or the request's own), costs no more than
// the ceiling.
func TestCeilingHoldsHoweverThePromptIsCached(t *testing.T) {
	c, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, tier := range c.Tiers {
		for _, m := range tier.Models {
			for _, prompt := range []int64{1_000, 20_000, 100_000} {
				const ceiling = 1_000_000 // $1
				d, err := routing.Route(c, routing.Feedback{}, routing.Request{Model: m.ID, InputTokens: prompt, MaxCostMicro: ceiling, QualityFloor: 0})
				if err != nil {
					continue // the ceiling rules it out: nothing to hold
				}
				for _, cand := range d.Candidates {
					out := cand.MaxTokens
					if out == 0 {
						out = cand.Model.ContextWindow - prompt
					}
					worst := cand.Model.Cost(routing.Tokens{Prompt: prompt, CacheWrite: prompt, Completion: out})
					if worst > ceiling {
						t.Fatalf("%s (for %s), prompt %d written to the cache, %d output tokens: %d µ$ over the ceiling %d", cand.Model.ID, m.ID, prompt, out, worst, ceiling)
					}
					checked++
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("%d candidates checked", checked)
	}
}

// TestCeilingErrorAsksForWhatFits: a ceiling between a Claude model's
// estimate at its input price and at its cache-write price is a 400
// max_cost_exceeded (not a context error) naming the amount that fits;
// that amount routes.
func TestCeilingErrorAsksForWhatFits(t *testing.T) {
	c, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		t.Fatal(err)
	}
	var m routing.Model
	for _, tier := range c.Tiers {
		for _, x := range tier.Models {
			if x.ID == "claude-sonnet-4" {
				m = x
			}
		}
	}
	const prompt = 100_000
	out := int64(routing.ExpectedOutputTokens)
	est, need := m.Cost(routing.Tokens{Prompt: prompt, Completion: out}), m.MaxCost(prompt, out)
	if need <= est {
		t.Fatalf("claude-sonnet-4: estimate %d, need %d: its cache writes should cost more than its input", est, need)
	}
	_, err = routing.Route(c, routing.Feedback{}, routing.Request{Model: m.ID, InputTokens: prompt, MaxCostMicro: est})
	var de *domain.Error
	if !errors.As(err, &de) || de.Code != "max_cost_exceeded" {
		t.Fatalf("a ceiling at the estimate: %v; want max_cost_exceeded", err)
	}
	if _, err := routing.Route(c, routing.Feedback{}, routing.Request{Model: m.ID, InputTokens: prompt, MaxCostMicro: need}); err != nil {
		t.Fatalf("a ceiling at what the 400 asks (%d µ$): %v", need, err)
	}
}
