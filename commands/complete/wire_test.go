package complete_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
)

// wireHarness is a harness whose mid tier is a Claude model reached
// through the Messages API, then an OpenAI model, both at the stand-in.
func wireHarness(t *testing.T) *harness {
	t.Helper()
	return newHarness(t, options{startChain: true, complete: func(cfg *complete.Config) {
		base := cfg.Catalog.Models()[0].BaseURL
		cat, err := routing.ParseCatalog([]byte(`{"tiers":[{"name":"mid","models":[
		  {"id":"claude-mid","vendor":"anthropic","api":"anthropic","upstream_model":"claude-sonnet-4-0","api_key_env":"K","base_url":"` + base + `",
		   "input_usd_per_1k":0.003,"output_usd_per_1k":0.015,"quality":0.92,"context_window":200000},
		  {"id":"gpt-mid","vendor":"openai","upstream_model":"gpt-4.1","api_key_env":"K","base_url":"` + base + `",
		   "input_usd_per_1k":0.002,"output_usd_per_1k":0.008,"quality":0.92,"context_window":200000}]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		up, err := upstream.New(upstream.Config{Timeout: 2 * time.Second, StreamIdleTimeout: 2 * time.Second,
			APIKey: func(string) string { return "sk-test" }})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Catalog, cfg.Upstream = cat, up
	}})
}

// TestWireTranslationRefusalFailsOver: a chat request the Messages API
// cannot be told (n 2) skips the tier's Claude model, without a call, for
// the next model of another API; named, Claude's translation refuses it
// as the client's 400, and a chat request it can be told reaches it.
func TestWireTranslationRefusalFailsOver(t *testing.T) {
	hs := wireHarness(t)
	res, err := hs.complete(t, request(t, "two choices", map[string]any{"model": "mid", "n": 2}), complete.CacheOff)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reply.Routing.Model != "gpt-mid" || hs.up.Calls("claude-sonnet-4-0") != 0 || hs.up.Calls("gpt-4.1") != 1 {
		t.Fatalf("routing %+v; calls claude %d, gpt %d", res.Reply.Routing, hs.up.Calls("claude-sonnet-4-0"), hs.up.Calls("gpt-4.1"))
	}

	_, err = hs.complete(t, request(t, "two choices", map[string]any{"model": "claude-mid", "n": 2}), complete.CacheOff)
	var de *domain.Error
	if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) || !strings.Contains(de.Message, "one choice") {
		t.Fatalf("named Claude with n 2: %v", err)
	}

	res, err = hs.complete(t, request(t, "hello claude", map[string]any{"model": "mid"}), complete.CacheOff)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reply.Routing.Model != "claude-mid" || !strings.Contains(string(res.Reply.Body), `"object":"chat.completion"`) ||
		!strings.Contains(string(res.Reply.Body), "hello claude") {
		t.Fatalf("routing %+v body %s", res.Reply.Routing, res.Reply.Body)
	}
}

// TestWireCutStreamBilledAsCounted: a translated Claude stream cut
// before its end is recorded with the prompt Anthropic counted in
// message_start (its cache write included, priced at the cache-write
// price), the output estimated from the text relayed.
func TestWireCutStreamBilledAsCounted(t *testing.T) {
	hs := wireHarness(t)
	hs.up.Set("claude-sonnet-4-0", upstreamtest.Behavior{CutAfter: 2})
	text := strings.Repeat("a long prompt to cache ", 30)
	res, err := hs.complete(t, request(t, text, map[string]any{"model": "claude-mid", "stream": true, "prompt_cache_key": "k"}), complete.CacheOff)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := drain(t, res.Stream)
	if !errors.Is(err, io.EOF) || res.Stream.End().Cut == nil || len(chunks) == 0 {
		t.Fatalf("end %v, cut %v, %d chunks", err, res.Stream.End().Cut, len(chunks))
	}
	es := hs.entries(t)
	c := es[len(es)-1].Completion
	if c.Outcome != "cut" || c.CacheWriteTokens == 0 || c.PromptTokens < c.CacheWriteTokens || !c.UsageEstimated || c.CompletionTokens == 0 {
		t.Fatalf("recorded %+v", c)
	}
}
