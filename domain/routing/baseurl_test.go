package routing_test

import "testing"

// TestWithBaseURLNamesTheOneModel: with one server for every model, a
// chat model name given is what every chat model asks that server for
// (the one model a local server has); the catalog's ids, tiers and prices
// stay, and embedding models keep their own names.
func TestWithBaseURLNamesTheOneModel(t *testing.T) {
	c := shipped(t)
	kept := c.WithBaseURL("http://127.0.0.1:9/v1", "K", "")
	if m, _ := kept.Model("gpt-4.1-nano"); m.UpstreamModel != "gpt-4.1-nano" {
		t.Fatalf("without a chat model name the upstream model changed: %q", m.UpstreamModel)
	}
	one := c.WithBaseURL("http://127.0.0.1:9/v1", "K", "llama3.2")
	for _, m := range one.Models() {
		orig, _ := c.Model(m.ID)
		if m.UpstreamModel != "llama3.2" || m.BaseURL != "http://127.0.0.1:9/v1" || m.InputPerM != orig.InputPerM || m.Tier != orig.Tier {
			t.Fatalf("%s: %+v (was %+v)", m.ID, m, orig)
		}
	}
	for _, m := range one.EmbeddingModels() {
		orig, _ := c.EmbeddingModel(m.ID)
		if m.UpstreamModel != orig.UpstreamModel {
			t.Fatalf("embedding model %s now asks for %q", m.ID, m.UpstreamModel)
		}
	}
}
