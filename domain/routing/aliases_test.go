package routing_test

import (
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/routing"
)

func TestAliases(t *testing.T) {
	c, err := routing.ParseCatalog(routing.DefaultCatalogJSON())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"claude-sonnet-4-5-20250929": "mid", "claude-3-5-haiku-20241022": "small", "claude-opus-4-1": "high",
		"claude-sonnet-4": "claude-sonnet-4", // a model id is itself
		"auto":            "auto", "nano": "nano", "gpt-17": "gpt-17", "": "",
	} {
		if got := c.Resolve(name); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", name, got, want)
		}
	}
	// ARR_MODEL_ALIASES overlays the catalog's: exact names before
	// patterns, longer patterns before shorter.
	extra, err := routing.ParseAliases("claude-sonnet-4-5=gpt-4.1, claude-*=auto ,claude-*sonnet*=high")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := c.WithAliases(extra)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"claude-sonnet-4-5": "gpt-4.1", "claude-sonnet-4-6": "high", "claude-haiku-4-5": "small", "claude-x": "auto"} {
		if got := c2.Resolve(name); got != want {
			t.Errorf("overlaid Resolve(%q) = %q, want %q", name, got, want)
		}
	}
	if c.Resolve("claude-x") != "claude-x" {
		t.Error("WithAliases changed the catalog it was called on")
	}
	d, err := routing.Route(c2, routing.Feedback{}, routing.Request{Model: "claude-sonnet-4-5", QualityFloor: 0.5, InputTokens: 10})
	if err != nil || d.Tier != "mid" || d.Candidates[0].Model.ID != "gpt-4.1" {
		t.Fatalf("routing an alias of a model id: %+v %v", d, err)
	}
	for _, bad := range []map[string]string{{"auto": "mid"}, {"mid": "high"}, {"gpt-4.1": "mid"}, {"x": "ultra"}, {"[": "mid"}} {
		if _, err := c.WithAliases(bad); err == nil {
			t.Errorf("WithAliases(%v) accepted", bad)
		}
	}
	for _, bad := range []string{"x", "=mid", "a=b,a=c"} {
		if _, err := routing.ParseAliases(bad); err == nil {
			t.Errorf("ParseAliases(%q) accepted", bad)
		}
	}
	if _, err := routing.ParseCatalog([]byte(strings.Replace(string(routing.DefaultCatalogJSON()), `"claude-*opus*": "high"`, `"claude-*opus*": "ultra"`, 1))); err == nil {
		t.Error("a catalog alias to no tier or model was accepted")
	}
}
