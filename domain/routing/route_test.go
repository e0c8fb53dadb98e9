package routing_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
)

func testCatalog(t testing.TB) *routing.Catalog {
	t.Helper()
	c, err := routing.ParseCatalog([]byte(`{"tiers":[
	 {"name":"nano","models":[{"id":"n1","vendor":"acme","base_url":"http://x","input_usd_per_1k":0.0001,"output_usd_per_1k":0.0004,"quality":0.78,"context_window":8192},
	                          {"id":"n2","vendor":"zeta","base_url":"http://x","input_usd_per_1k":0.0001,"output_usd_per_1k":0.0004,"quality":0.79,"context_window":8192}]},
	 {"name":"small","models":[{"id":"s1","vendor":"acme","base_url":"http://x","input_usd_per_1k":0.0004,"output_usd_per_1k":0.0016,"quality":0.85,"context_window":8192}]},
	 {"name":"mid","models":[{"id":"m1","vendor":"zeta","base_url":"http://x","input_usd_per_1k":0.002,"output_usd_per_1k":0.008,"quality":0.91,"context_window":8192},
	                         {"id":"m2","vendor":"acme","base_url":"http://x","input_usd_per_1k":0.003,"output_usd_per_1k":0.015,"quality":0.92,"context_window":8192}]},
	 {"name":"high","models":[{"id":"h1","vendor":"zeta","base_url":"http://x","input_usd_per_1k":0.01,"output_usd_per_1k":0.04,"quality":0.97,"context_window":8192}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRoutingTable(t *testing.T) {
	c := testCatalog(t)
	cases := []struct {
		name       string
		req        routing.Request
		fb         routing.Feedback
		tier       string
		first      string
		maxTokens  int64 // of the first candidate
		errKind    error
		errCode    string
		errMention []string
	}{
		{name: "easy request goes to nano", req: routing.Request{Difficulty: 0.05, QualityFloor: 0.75, InputTokens: 20}, tier: "nano", first: "n1"},
		{name: "medium difficulty skips nano", req: routing.Request{Difficulty: 0.3, QualityFloor: 0.75, InputTokens: 200}, tier: "small", first: "s1"},
		{name: "hard request goes to mid", req: routing.Request{Difficulty: 0.7, QualityFloor: 0.75, InputTokens: 200}, tier: "mid", first: "m1"},
		{name: "higher floor climbs the ladder", req: routing.Request{Difficulty: 0.05, QualityFloor: 0.95, InputTokens: 20}, tier: "high", first: "h1"},
		{name: "zero floor is the cheapest tier", req: routing.Request{Difficulty: 0.9, QualityFloor: 0, InputTokens: 20}, tier: "nano", first: "n1"},
		{name: "ceiling caps max_tokens", req: routing.Request{Difficulty: 0.05, QualityFloor: 0.75, InputTokens: 100, MaxCostMicro: 200},
			// (200e6 - 100*100000) / 400000 = 475 tokens
			tier: "nano", first: "n1", maxTokens: 475},
		{name: "own max_tokens under the cap is kept", req: routing.Request{Difficulty: 0.05, QualityFloor: 0.75, InputTokens: 100, MaxCostMicro: 200, MaxTokens: 50},
			tier: "nano", first: "n1", maxTokens: 0},
		{name: "ceiling rules out the tier the floor wants",
			req:     routing.Request{Difficulty: 0.7, QualityFloor: 0.75, InputTokens: 1000, MaxCostMicro: 500},
			errKind: domain.ErrInvalid, errCode: "no_tier_satisfies_constraints", errMention: []string{"mid", "raise max_cost_usd to at least 0.004048", "lower quality_floor to 0.62 to use nano"}},
		{name: "floor no tier reaches", req: routing.Request{Difficulty: 1, QualityFloor: 0.99, InputTokens: 10},
			errKind: domain.ErrInvalid, errCode: "no_tier_satisfies_constraints", errMention: []string{"no tier reaches the quality floor", "lower quality_floor to 0.94"}},
		{name: "brand_pref picks the vendor within the tier", req: routing.Request{Difficulty: 0.05, QualityFloor: 0.75, InputTokens: 20, BrandPref: "zeta", BrandPrefAllowed: true},
			tier: "nano", first: "n2"},
		{name: "brand_pref picks the cheapest qualifying tier with the vendor", req: routing.Request{Difficulty: 0.3, QualityFloor: 0.75, InputTokens: 20, BrandPref: "zeta", BrandPrefAllowed: true},
			tier: "mid", first: "m1"},
		{name: "brand_pref without Pro is forbidden", req: routing.Request{Difficulty: 0.05, QualityFloor: 0.75, BrandPref: "zeta"},
			errKind: domain.ErrForbidden, errCode: "brand_pref_requires_pro"},
		{name: "unknown brand", req: routing.Request{Difficulty: 0.05, QualityFloor: 0.75, BrandPref: "nobody", BrandPrefAllowed: true},
			errKind: domain.ErrInvalid, errCode: "invalid_brand_pref"},
		{name: "named tier ignores the floor", req: routing.Request{Model: "nano", Difficulty: 0.9, QualityFloor: 0.75, InputTokens: 20}, tier: "nano", first: "n1"},
		{name: "named model comes first", req: routing.Request{Model: "m2", Difficulty: 0.1, QualityFloor: 0.75, InputTokens: 20}, tier: "mid", first: "m2"},
		{name: "named tier over the ceiling", req: routing.Request{Model: "high", Difficulty: 0.1, QualityFloor: 0.75, InputTokens: 2000, MaxCostMicro: 100},
			errKind: domain.ErrInvalid, errCode: "max_cost_exceeded", errMention: []string{"high tier is estimated at"}},
		{name: "unknown model is not found", req: routing.Request{Model: "gpt-17", QualityFloor: 0.75}, errKind: domain.ErrNotFound, errCode: "model_not_found"},
		{name: "bad feedback on nano in the low band moves auto to small",
			req: routing.Request{Difficulty: 0.05, QualityFloor: 0.75, InputTokens: 20},
			fb:  routing.Feedback{{Tier: "nano", Band: routing.BandLow}: {N: 10, QualitySum: 0}}, tier: "small", first: "s1"},
		{name: "bad feedback in another band changes nothing here",
			req: routing.Request{Difficulty: 0.05, QualityFloor: 0.75, InputTokens: 20},
			fb:  routing.Feedback{{Tier: "nano", Band: routing.BandMid}: {N: 10, QualitySum: 0}}, tier: "nano", first: "n1"},
		{name: "prompt over the context window", req: routing.Request{Model: "nano", QualityFloor: 0.75, InputTokens: 9000},
			errKind: domain.ErrInvalid, errCode: "context_length_exceeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := routing.Route(c, tc.fb, tc.req)
			if tc.errKind != nil {
				var de *domain.Error
				if !errors.Is(err, tc.errKind) || !errors.As(err, &de) || de.Code != tc.errCode {
					t.Fatalf("err = %v, want kind %v code %s", err, tc.errKind, tc.errCode)
				}
				for _, s := range tc.errMention {
					if !strings.Contains(de.Message, s) {
						t.Errorf("message %q does not mention %q", de.Message, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Tier != tc.tier || d.Candidates[0].Model.ID != tc.first {
				t.Fatalf("got tier %s first %s, want %s %s", d.Tier, d.Candidates[0].Model.ID, tc.tier, tc.first)
			}
			if got := d.Candidates[0].MaxTokens; got != tc.maxTokens {
				t.Errorf("max_tokens cap %d, want %d", got, tc.maxTokens)
			}
			for _, cand := range d.Candidates {
				if tc.req.MaxCostMicro > 0 {
					worst := cand.Model.Cost(routing.Tokens{Prompt: tc.req.InputTokens, Completion: max(cand.MaxTokens, tc.req.MaxTokens)})
					if cand.MaxTokens == 0 && tc.req.MaxTokens == 0 || worst > tc.req.MaxCostMicro {
						t.Errorf("candidate %s: worst case %d µ$ over the ceiling %d", cand.Model.ID, worst, tc.req.MaxCostMicro)
					}
				}
			}
		})
	}
}

func TestFailoverOrder(t *testing.T) {
	c := testCatalog(t)
	d, err := routing.Route(c, nil, routing.Request{Difficulty: 0.05, QualityFloor: 0.75, InputTokens: 20, MaxCostMicro: 3000})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, cand := range d.Candidates {
		ids = append(ids, cand.Model.ID)
	}
	// The ceiling of 3000 µ$ leaves out mid's m2 and high (estimated over it).
	if got := strings.Join(ids, ","); got != "n1,n2,s1,m1" {
		t.Fatalf("failover order %s, want n1,n2,s1,m1", got)
	}
}

func TestDifficulty(t *testing.T) {
	cases := []struct {
		name     string
		f        routing.Features
		min, max float64
	}{
		{"greeting", routing.Features{Messages: []routing.Message{{Role: "user", Text: "Say hello"}}}, 0, 0.2},
		{"code", routing.Features{Messages: []routing.Message{{Role: "user", Text: "Why does this Go func panic?\n```go\nfunc f() { var m map[string]int; m[\"a\"] = 1 }\n```"}}}, 0.3, 0.6},
		{"proof with reasoning and tools", routing.Features{Tools: 2, JSONMode: true, Messages: []routing.Message{
			{Role: "system", Text: strings.Repeat("You are a careful mathematician. ", 50)},
			{Role: "user", Text: "Prove step by step that the integral of x^2 from 0 to 3 is 9, and compare two methods."}}}, 0.67, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := routing.Difficulty(tc.f)
			if d < tc.min || d > tc.max {
				t.Fatalf("difficulty %.3f not in [%.2f, %.2f]", d, tc.min, tc.max)
			}
			if routing.Difficulty(tc.f) != d {
				t.Fatal("difficulty is not deterministic")
			}
		})
	}
}

func TestDefaultCatalogParses(t *testing.T) {
	c, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tiers) != 4 {
		t.Fatalf("default catalog has %d tiers, want nano, small, mid, high", len(c.Tiers))
	}
	if _, err := routing.ParseCatalog([]byte(`{"tiers":[{"name":"high","models":[]},{"name":"nano"}]}`)); err == nil {
		t.Fatal("a catalog with tiers out of order parsed")
	}
}
