package routing_test

import (
	"errors"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
)

func TestReservation(t *testing.T) {
	cheap := routing.Model{ID: "cheap", InputPerM: 100_000, OutputPerM: 400_000, ContextWindow: 10_000}  // $0.10 / $0.40 per M
	dear := routing.Model{ID: "dear", InputPerM: 2_000_000, OutputPerM: 8_000_000, ContextWindow: 1_000} // $2 / $8 per M
	// $3 input, $0.30 cache reads, $3.75 cache writes, $15 output per M.
	cached := routing.Model{ID: "cached", InputPerM: 3_000_000, CachedInputPerM: 300_000, CacheWritePerM: 3_750_000, OutputPerM: 15_000_000, ContextWindow: 1_000}
	tests := []struct {
		name         string
		cands        []routing.Candidate
		reqMax       int64
		prompt       int64
		cost, tokens int64
	}{
		{"max_tokens bounds the output", []routing.Candidate{{Model: cheap}}, 100, 50, cheap.MaxCost(50, 100), 150},
		{"without max_tokens the context bounds it", []routing.Candidate{{Model: cheap}}, 0, 50, cheap.MaxCost(50, 9_950), 10_000},
		{"the candidate's cap under a ceiling", []routing.Candidate{{Model: cheap, MaxTokens: 20}}, 100, 50, cheap.MaxCost(50, 20), 70},
		{"the dearest failover counts", []routing.Candidate{{Model: cheap}, {Model: dear}}, 100, 50, dear.MaxCost(50, 100), 150},
		{"each bound of its own: the largest context, the dearest price", []routing.Candidate{{Model: cheap}, {Model: dear}}, 0, 50,
			max(cheap.MaxCost(50, 9_950), dear.MaxCost(50, 950)), 10_000},
		{"a prompt that fills the context still reserves a token", []routing.Candidate{{Model: dear}}, 0, 5_000, dear.MaxCost(5_000, 1), 5_001},
		// 100 prompt tokens at $3.75 per M (375 µ$) and 50 output tokens at $15 per M (750 µ$).
		{"every prompt token at the cache-write price", []routing.Candidate{{Model: cached}}, 50, 100, 1_125, 150},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cost, tokens := routing.Reservation(tc.cands, tc.reqMax, tc.prompt)
			if cost != tc.cost || tokens != tc.tokens {
				t.Errorf("Reservation = %d µ$, %d tokens; want %d, %d", cost, tokens, tc.cost, tc.tokens)
			}
			// Whatever the upstream answers within the bounds costs no more.
			for _, c := range tc.cands {
				out := routing.MaxOutput(c, tc.reqMax, tc.prompt)
				for _, split := range []routing.Tokens{{}, {CacheRead: tc.prompt}, {CacheWrite: tc.prompt}, {CacheRead: tc.prompt / 2, CacheWrite: tc.prompt / 2}} {
					split.Prompt, split.Completion = tc.prompt, out
					if c.Model.Cost(split) > cost {
						t.Errorf("%s at its bound (%+v) costs more than the reservation", c.Model.ID, split)
					}
				}
			}
		})
	}
	if got := routing.PromptBound(1000, 2); got != 1000+2*routing.ImageTokenBound {
		t.Errorf("PromptBound = %d", got)
	}
}

func TestRouteKeepsToTheKeysModels(t *testing.T) {
	cat, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		t.Fatal(err)
	}
	onlyNano := func(id, tier string) bool { return tier == "nano" }
	for _, model := range []string{"high", "o3"} {
		_, err := routing.Route(cat, nil, routing.Request{Model: model, QualityFloor: 0.5, Allow: onlyNano})
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != "model_not_allowed" || !errors.Is(err, domain.ErrForbidden) {
			t.Errorf("%s with a nano-only key: %v; want 403 model_not_allowed", model, err)
		}
	}
	d, err := routing.Route(cat, nil, routing.Request{Model: "auto", QualityFloor: 0.95, Allow: onlyNano})
	if err == nil {
		t.Errorf("auto with a floor only high clears, nano-only: routed to %s", d.Tier)
	}
	d, err = routing.Route(cat, nil, routing.Request{Model: "auto", QualityFloor: 0.5, Difficulty: 0.9, Allow: onlyNano})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Candidates {
		if c.Model.Tier != "nano" {
			t.Errorf("a candidate outside the key's models: %s (%s)", c.Model.ID, c.Model.Tier)
		}
	}
	onlyO3 := func(id, tier string) bool { return id == "o3" }
	d, err = routing.Route(cat, nil, routing.Request{Model: "auto", QualityFloor: 0.5, Allow: onlyO3})
	if err != nil || d.Tier != "high" || len(d.Candidates) != 1 || d.Candidates[0].Model.ID != "o3" {
		t.Fatalf("auto with an o3-only key: %+v, %v", d, err)
	}
}
