package routing_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
)

func shipped(t *testing.T) *routing.Catalog {
	t.Helper()
	c, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestShippedCatalogHasEmbeddingModels(t *testing.T) {
	c := shipped(t)
	if len(c.EmbeddingTiers) != 2 || c.EmbeddingTiers[0].Name != "embed-small" || c.EmbeddingTiers[1].Name != "embed-large" {
		t.Fatalf("embedding tiers %+v", c.EmbeddingTiers)
	}
	m, ok := c.EmbeddingModel("text-embedding-3-small")
	if !ok || m.Dimensions != 1536 || m.MinDimensions != 1 || m.InputPerM != 20_000 || m.OutputPerM != 0 || m.Tier != "embed-small" {
		t.Fatalf("text-embedding-3-small: %+v", m)
	}
	// 1,000 tokens at $0.00002 per 1k cost 20 micro-dollars.
	if got := m.Cost(routing.Tokens{Prompt: 1000}); got != 20 {
		t.Fatalf("cost of 1000 tokens: %d", got)
	}
	if _, chat := c.Model("text-embedding-3-small"); chat {
		t.Fatal("an embedding model is a chat model too")
	}
	moved := c.WithBaseURL("http://127.0.0.1:9/v1/", "K", "")
	if m, _ := moved.EmbeddingModel("mistral-embed"); m.BaseURL != "http://127.0.0.1:9/v1" || m.APIKeyEnv != "K" {
		t.Fatalf("WithBaseURL left the embedding model at %s (%s)", m.BaseURL, m.APIKeyEnv)
	}
}

func TestEmbeddingCatalogIsChecked(t *testing.T) {
	chat := `"tiers":[{"name":"nano","models":[{"id":"c1","vendor":"v","base_url":"http://x","input_usd_per_1k":0.1,"output_usd_per_1k":0.1,"quality":0.9,"context_window":4096}]}]`
	model := func(fields string) string {
		return `{` + chat + `,"embedding_tiers":[{"name":"embed-small","models":[{` + fields + `}]}]}`
	}
	ok := `"id":"e1","vendor":"v","base_url":"http://x","input_usd_per_1k":0.00002,"dimensions":8,"max_input_tokens":100`
	if _, err := routing.ParseCatalog([]byte(model(ok))); err != nil {
		t.Fatalf("a good embedding model: %v", err)
	}
	cases := []struct{ name, catalog, want string }{
		{"tier name", `{` + chat + `,"embedding_tiers":[{"name":"nano","models":[]}]}`, `embedding tier "nano"`},
		{"out of order", `{` + chat + `,"embedding_tiers":[{"name":"embed-large","models":[{` + ok + `}]},{"name":"embed-small","models":[]}]}`, `embedding tier "embed-small"`},
		{"no models", `{` + chat + `,"embedding_tiers":[{"name":"embed-small","models":[]}]}`, "has no models"},
		{"duplicate id", model(strings.Replace(ok, `"e1"`, `"c1"`, 1)), `"c1" appears twice`},
		{"tier as id", model(strings.Replace(ok, `"e1"`, `"embed-large"`, 1)), "may not be"},
		{"no price", model(strings.Replace(ok, `"input_usd_per_1k":0.00002,`, ``, 1)), "input_usd_per_1k"},
		{"no dimensions", model(strings.Replace(ok, `"dimensions":8`, `"dimensions":0`, 1)), "dimensions must be"},
		{"min over dimensions", model(ok + `,"min_dimensions":9`), "min_dimensions"},
		{"no max input", model(strings.Replace(ok, `"max_input_tokens":100`, `"max_input_tokens":0`, 1)), "max_input_tokens"},
		{"unknown field", model(ok + `,"quality":0.9`), "unknown field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := routing.ParseCatalog([]byte(tc.catalog))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one that says %q", err, tc.want)
			}
		})
	}
	// A chat model may not take an embedding tier's name either.
	bad := strings.Replace(chat, `"c1"`, `"embed-small"`, 1)
	if _, err := routing.ParseCatalog([]byte(`{` + bad + `}`)); err == nil {
		t.Fatal("a chat model named embed-small parsed")
	}
}

func TestRouteEmbedding(t *testing.T) {
	c := shipped(t)
	cases := []struct {
		name       string
		req        routing.EmbeddingRequest
		tier       string
		candidates string
		code       string
		kind       error
	}{
		{name: "auto", req: routing.EmbeddingRequest{InputTokens: 10}, tier: "embed-small", candidates: "text-embedding-3-small,mistral-embed"},
		{name: "empty model is auto", req: routing.EmbeddingRequest{Model: ""}, tier: "embed-small", candidates: "text-embedding-3-small,mistral-embed"},
		{name: "auto with dimensions one model has", req: routing.EmbeddingRequest{Model: "auto", Dimensions: 256}, tier: "embed-small", candidates: "text-embedding-3-small"},
		{name: "auto with the native length of the second", req: routing.EmbeddingRequest{Model: "auto", Dimensions: 1024}, tier: "embed-small", candidates: "text-embedding-3-small,mistral-embed"},
		{name: "auto moves up for a length only large models have", req: routing.EmbeddingRequest{Dimensions: 3072}, tier: "embed-large", candidates: "text-embedding-3-large,gemini-embedding-001"},
		{name: "a long input leaves out the model that cannot take it", req: routing.EmbeddingRequest{LongestInput: 8192, Dimensions: 1024}, tier: "embed-small", candidates: "mistral-embed"},
		{name: "tier", req: routing.EmbeddingRequest{Model: "embed-large", Dimensions: 100}, tier: "embed-large", candidates: "text-embedding-3-large"},
		{name: "model alone", req: routing.EmbeddingRequest{Model: "gemini-embedding-001"}, tier: "embed-large", candidates: "gemini-embedding-001"},
		{name: "model without that length", req: routing.EmbeddingRequest{Model: "mistral-embed", Dimensions: 256}, code: "dimensions_not_supported", kind: domain.ErrInvalid},
		{name: "no model has that length", req: routing.EmbeddingRequest{Dimensions: 4096}, code: "dimensions_not_supported", kind: domain.ErrInvalid},
		{name: "input too long", req: routing.EmbeddingRequest{Model: "gemini-embedding-001", LongestInput: 2049}, code: "context_length_exceeded", kind: domain.ErrInvalid},
		{name: "chat model", req: routing.EmbeddingRequest{Model: "gpt-4.1-nano"}, code: "not_an_embedding_model", kind: domain.ErrInvalid},
		{name: "chat tier", req: routing.EmbeddingRequest{Model: "small"}, code: "not_an_embedding_model", kind: domain.ErrInvalid},
		{name: "unknown", req: routing.EmbeddingRequest{Model: "text-embedding-9"}, code: "model_not_found", kind: domain.ErrNotFound},
		{name: "auto among the key's models", req: routing.EmbeddingRequest{Allow: func(id, tier string) bool { return tier == "embed-large" }}, tier: "embed-large", candidates: "text-embedding-3-large,gemini-embedding-001"},
		{name: "a tier's models the key may use", req: routing.EmbeddingRequest{Model: "embed-small", Allow: func(id, _ string) bool { return id == "mistral-embed" }}, tier: "embed-small", candidates: "mistral-embed"},
		{name: "a model the key may not use", req: routing.EmbeddingRequest{Model: "mistral-embed", Allow: func(id, _ string) bool { return id != "mistral-embed" }}, code: "model_not_allowed", kind: domain.ErrForbidden},
		{name: "auto for a key of chat models only", req: routing.EmbeddingRequest{Allow: func(_, tier string) bool { return tier == "nano" }}, code: "model_not_allowed", kind: domain.ErrForbidden},
		{name: "negative dimensions", req: routing.EmbeddingRequest{Dimensions: -1}, code: "invalid_value", kind: domain.ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := routing.RouteEmbedding(c, tc.req)
			if tc.code != "" {
				var de *domain.Error
				if !errors.As(err, &de) || de.Code != tc.code || !errors.Is(err, tc.kind) {
					t.Fatalf("err %v, want %s (%v)", err, tc.code, tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, cand := range d.Candidates {
				ids = append(ids, cand.Model.ID)
			}
			if d.Tier != tc.tier || strings.Join(ids, ",") != tc.candidates {
				t.Fatalf("tier %s, candidates %v; want %s, %s", d.Tier, ids, tc.tier, tc.candidates)
			}
		})
	}
	d, _ := routing.RouteEmbedding(c, routing.EmbeddingRequest{Model: "text-embedding-3-large", InputTokens: 10_000})
	if d.Candidates[0].EstCost != 1300 {
		t.Fatalf("estimated cost of 10,000 tokens at $0.00013/1k: %d micro-dollars", d.Candidates[0].EstCost)
	}
}

func TestEmbeddingModelsAreNotForChat(t *testing.T) {
	c := shipped(t)
	for _, name := range []string{"text-embedding-3-small", "embed-large"} {
		_, err := routing.Route(c, nil, routing.Request{Model: name, QualityFloor: 0.5})
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != "not_a_chat_model" || !errors.Is(err, domain.ErrInvalid) || !strings.Contains(de.Message, "/v1/embeddings") {
			t.Fatalf("chat with %s: %v", name, err)
		}
	}
	if _, err := routing.RouteEmbedding(&routing.Catalog{}, routing.EmbeddingRequest{}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("a catalog without embedding models: %v", err)
	}
}

func TestTierOfCoversBothKinds(t *testing.T) {
	c := shipped(t)
	for id, want := range map[string]string{"gpt-4.1": "mid", "gemini-embedding-001": "embed-large", "nope": ""} {
		if got := c.TierOf(id); got != want {
			t.Errorf("TierOf(%s) = %q, want %q", id, got, want)
		}
	}
}
