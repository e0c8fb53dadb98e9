package routing

import (
	"math"
	"math/bits"
)

// Tokens are the token counts a request is priced by. Prompt is every
// input token, the way OpenAI counts prompt_tokens: CacheRead of them were
// read from the upstream's prompt cache (OpenAI's cached_tokens,
// Anthropic's cache_read_input_tokens) and CacheWrite of them written to
// it (Anthropic's cache_creation_input_tokens); the rest are plain input.
// Completion is the output. CacheWrite1h of the cache writes went to
// Anthropic's 1-hour cache (cache_creation.ephemeral_1h_input_tokens),
// priced at twice the input price (OneHourCacheWriteFactor) rather than
// the catalog's cache-write price (the 5-minute one). WebSearches is the
// server-side web searches the upstream ran (server_tool_use.
// web_search_requests), each at WebSearchMicroUSD on top of the tokens.
type Tokens struct {
	Prompt       int64
	Completion   int64
	CacheRead    int64
	CacheWrite   int64
	CacheWrite1h int64 `json:",omitempty"`
	WebSearches  int64 `json:",omitempty"`
}

// OneHourCacheWriteFactor is Anthropic's price of a token written to its
// 1-hour prompt cache, as a multiple of the model's input price.
const OneHourCacheWriteFactor = 2

// WebSearchMicroUSD is the price of one server-side web search:
// Anthropic's $10 per 1,000 searches.
const WebSearchMicroUSD = 10_000

// MaxTokenCount bounds each count an upstream reports (2^40: no request
// is a trillion tokens).
const MaxTokenCount = 1 << 40

// Clamped is t with its counts in [0, MaxTokenCount] (an upstream's
// negative count never credits anyone) and its cache counts kept within
// the prompt: CacheRead in [0, Prompt], CacheWrite in [0,
// Prompt-CacheRead]: an upstream that reports more cached tokens than
// prompt tokens has at most its whole prompt cached.
func (t Tokens) Clamped() Tokens {
	bound := func(n int64) int64 { return min(max(n, 0), MaxTokenCount) }
	t.Prompt, t.Completion = bound(t.Prompt), bound(t.Completion)
	t.CacheRead = min(bound(t.CacheRead), t.Prompt)
	t.CacheWrite = min(bound(t.CacheWrite), t.Prompt-t.CacheRead)
	t.CacheWrite1h = min(bound(t.CacheWrite1h), t.CacheWrite)
	t.WebSearches = bound(t.WebSearches)
	return t
}

// priced is the sum of counts[i] x prices[i] (both not negative), in
// micro-dollars rounded up from micro-dollars per million, saturating at
// the largest MicroUSD instead of wrapping.
func priced(counts, prices []int64) MicroUSD {
	var hi, lo uint64
	for i := range counts {
		h, l := bits.Mul64(uint64(counts[i]), uint64(prices[i]))
		var carry uint64
		lo, carry = bits.Add64(lo, l, 0)
		hi += h + carry
	}
	const perMillion = 1_000_000
	if hi >= perMillion { // the quotient would not fit 64 bits
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, perMillion)
	if r > 0 {
		q++
	}
	return MicroUSD(min(q, math.MaxInt64))
}

// Cost is the price of a request with these token counts, in
// micro-dollars, rounded up: plain input at the input price, cache reads
// at the cached-input price, cache writes at the cache-write price (those
// to the 1-hour cache at OneHourCacheWriteFactor times the input price),
// output at the output price (the cache counts clamped to the prompt,
// Clamped), and each web search at WebSearchMicroUSD.
func (m Model) Cost(t Tokens) MicroUSD {
	t = t.Clamped()
	plain := t.Prompt - t.CacheRead - t.CacheWrite
	return priced([]int64{plain, t.CacheRead, t.CacheWrite - t.CacheWrite1h, t.CacheWrite1h, t.Completion, t.WebSearches},
		[]int64{m.InputPerM, m.CachedInputPerM, m.CacheWritePerM, OneHourCacheWriteFactor * m.InputPerM, m.OutputPerM, WebSearchMicroUSD * 1_000_000})
}

// MaxCost is the most a request of promptTokens input and
// completionTokens output tokens can cost, however its prompt splits into
// plain input, cache reads and cache writes: every prompt token at the
// dearest of the three prices. It is what a reservation holds.
func (m Model) MaxCost(promptTokens, completionTokens int64) MicroUSD {
	t := Tokens{Prompt: promptTokens, Completion: completionTokens}.Clamped()
	return priced([]int64{t.Prompt, t.Completion}, []int64{m.dearestInputPerM(), m.OutputPerM})
}

// dearestInputPerM is the dearest price a prompt token can cost: plain,
// read from the cache or written to it (to the 1-hour cache, for an
// Anthropic model, at OneHourCacheWriteFactor times the input price).
func (m Model) dearestInputPerM() int64 {
	p := max(m.InputPerM, m.CachedInputPerM, m.CacheWritePerM)
	if m.Wire() == APIAnthropic {
		p = max(p, OneHourCacheWriteFactor*m.InputPerM)
	}
	return p
}
