package complete

import (
	"encoding/json"
	"testing"

	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/routing"
)

// TestAtkUpstreamUsageNeverCredits: usageOf clamps the cached tokens to
// the prompt but keeps a negative prompt_tokens or completion_tokens an
// OpenAI-compatible upstream reports (the Anthropic path refuses counts
// outside 0..2^40; this one does not), so the completion's cost is
// negative and settling it credits the key's budget.
func TestAtkUpstreamUsageNeverCredits(t *testing.T) {
	m := routing.Model{ID: "m", InputPerM: 3_000_000, CachedInputPerM: 300_000, CacheWritePerM: 3_750_000, OutputPerM: 15_000_000}
	for _, body := range []string{
		`{"prompt_tokens":-1000000,"completion_tokens":10}`,
		`{"prompt_tokens":100,"completion_tokens":-1000000,"prompt_tokens_details":{"cached_tokens":50}}`,
	} {
		var c chat.TokenCounts
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			t.Fatal(err)
		}
		u := usageOf(&c)
		if cost := m.Cost(u.Tokens()); cost < 0 || u.Prompt < 0 || u.Completion < 0 {
			t.Errorf("usage %s: %+v costs %d µ$", body, u, cost)
		}
	}
}

// TestAtkCachedTokensAsWholeFloat: a compatible server sending
// cached_tokens as 1024.0 (a whole number in float form, which JSON
// allows) has its cache reads dropped: the client is billed every cached
// token at the full input price.
func TestAtkCachedTokensAsWholeFloat(t *testing.T) {
	var c chat.TokenCounts
	if err := json.Unmarshal([]byte(`{"prompt_tokens":2000,"completion_tokens":10,"prompt_tokens_details":{"cached_tokens":1024.0}}`), &c); err != nil {
		t.Fatal(err)
	}
	if u := usageOf(&c); u.CacheRead != 1024 {
		t.Errorf("cached_tokens 1024.0 read as %d cache reads", u.CacheRead)
	}
}

// TestAtkUpstreamUsageHugeCountsDoNotWrap: a huge prompt_tokens (no upper
// bound on the OpenAI path, unlike the Anthropic one's 2^40) overflows
// Cost's micro-dollar arithmetic: the cost wraps to less than a far
// smaller prompt's.
func TestAtkUpstreamUsageHugeCountsDoNotWrap(t *testing.T) {
	m := routing.Model{ID: "m", InputPerM: 3_000_000, CachedInputPerM: 300_000, CacheWritePerM: 3_750_000, OutputPerM: 15_000_000}
	var small, huge chat.TokenCounts
	_ = json.Unmarshal([]byte(`{"prompt_tokens":1000000,"completion_tokens":1}`), &small)
	_ = json.Unmarshal([]byte(`{"prompt_tokens":4611686018427387,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":1}}`), &huge)
	cs, ch := m.Cost(usageOf(&small).Tokens()), m.Cost(usageOf(&huge).Tokens())
	if ch < cs {
		t.Errorf("prompt_tokens %d costs %d µ$, less than 1e6 prompt tokens' %d µ$", huge.PromptTokens, ch, cs)
	}
}
