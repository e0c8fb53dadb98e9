package complete_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/routing"
)

// ledger is an Admitter that admits everything and notes what each
// request reserved and settled, in micro-dollars. Safe for concurrent use.
type ledger struct {
	mu                sync.Mutex
	reserved, settled []int64
}

func (l *ledger) Admit(_ context.Context, _ complete.Caller, _ []string, maxCostUSD float64, _ int64) (func(context.Context, float64, int64), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reserved = append(l.reserved, int64(math.Round(maxCostUSD*1e6)))
	return func(_ context.Context, costUSD float64, _ int64) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.settled = append(l.settled, int64(math.Round(costUSD*1e6)))
	}, nil
}

func (l *ledger) last() (reserved, settled int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reserved[len(l.reserved)-1], l.settled[len(l.settled)-1]
}

// TestCachedPromptTokensAreBilledAtTheCachedPrice: an upstream reporting
// prompt_tokens_details.cached_tokens has those prompt tokens billed at
// the model's cached-input price, the rest at its input price, in routing,
// the audit entry and the key's settled spend, replied and streamed; the
// reservation priced every prompt token at the cache-write price; a
// response-cache hit shows no cached tokens and costs nothing.
func TestCachedPromptTokensAreBilledAtTheCachedPrice(t *testing.T) {
	l := &ledger{}
	hs := newHarness(t, options{startChain: true, complete: func(c *complete.Config) { c.Limits = l }})
	const cachedTokens = 2000
	hs.up.Set("claude-sonnet-4-0", upstreamtest.Behavior{CachedTokens: cachedTokens})
	m, _ := hs.h.Catalog().Model("claude-sonnet-4")
	if m.CachedInputPerM >= m.InputPerM || m.CacheWritePerM <= m.InputPerM {
		t.Fatalf("claude-sonnet-4 prices: %+v", m)
	}
	text := strings.Repeat("the same long system prefix ", 400)

	for _, stream := range []bool{false, true} {
		r := request(t, text+fmt.Sprint(stream), map[string]any{"model": "claude-sonnet-4", "stream": stream})
		res, err := hs.complete(t, r, complete.CacheOn)
		if err != nil {
			t.Fatal(err)
		}
		u, ri := res.Reply.Usage, res.Reply.Routing
		if stream {
			if _, err := drain(t, res.Stream); err != io.EOF {
				t.Fatalf("stream: %v", err)
			}
			u, ri = res.Stream.End().Usage, res.Stream.End().Routing
		}
		if u.CacheRead != cachedTokens || u.Prompt <= cachedTokens || u.Estimated || ri.CacheReadTokens != cachedTokens || ri.CacheWriteTokens != 0 {
			t.Fatalf("stream %v: usage %+v, routing %+v; want %d cached of the prompt tokens", stream, u, ri, cachedTokens)
		}
		// $3 per M plain input, $0.30 per M cached, $15 per M output, rounded up.
		want := ((u.Prompt-cachedTokens)*m.InputPerM + cachedTokens*m.CachedInputPerM + u.Completion*m.OutputPerM + 999_999) / 1_000_000
		uncached := m.Cost(routing.Tokens{Prompt: u.Prompt, Completion: u.Completion})
		if got := int64(math.Round(ri.CostUSD * 1e6)); got != want || want >= uncached {
			t.Errorf("stream %v: routing.cost_usd %d µ$; want %d (uncached %d)", stream, got, want, uncached)
		}
		es := hs.entries(t)
		e := es[len(es)-1].Completion
		if e.CacheReadTokens != cachedTokens || e.CacheWriteTokens != 0 || e.CostMicroUSD != want || e.PromptTokens != u.Prompt || e.Stream != stream {
			t.Errorf("stream %v: audit entry %+v; want %d cached tokens at %d µ$", stream, e, cachedTokens, want)
		}
		bound := routing.PromptBound(len(r.Body), 0)
		reserved, settled := l.last()
		if settled != want || reserved != m.MaxCost(bound, m.ContextWindow-bound) {
			t.Errorf("stream %v: reserved %d µ$ (want every prompt token at the cache-write price: %d), settled %d (want %d)",
				stream, reserved, m.MaxCost(bound, m.ContextWindow-bound), settled, want)
		}
	}

	// The same request again is a hit of the response cache: no upstream
	// call, so no prompt cache read, and no cost.
	res, err := hs.complete(t, request(t, text+"false", map[string]any{"model": "claude-sonnet-4"}), complete.CacheOn)
	if err != nil {
		t.Fatal(err)
	}
	es := hs.entries(t)
	if ri, e := res.Reply.Routing, es[len(es)-1].Completion; !ri.CacheHit || ri.CacheReadTokens != 0 || ri.CostUSD != 0 || e.CacheReadTokens != 0 || e.CostMicroUSD != 0 {
		t.Errorf("a response-cache hit: routing %+v, audit entry %+v; want no cached tokens, no cost", ri, e)
	}
}
