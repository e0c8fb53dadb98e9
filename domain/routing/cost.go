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
// Completion is the output.
type Tokens struct {
	Prompt     int64
	Completion int64
	CacheRead  int64
	CacheWrite int64
}

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
// at the cached-input price, cache writes at the cache-write price, output
// at the output price (the cache counts clamped to the prompt, Clamped).
func (m Model) Cost(t Tokens) MicroUSD {
	t = t.Clamped()
	plain := t.Prompt - t.CacheRead - t.CacheWrite
	return priced([]int64{plain, t.CacheRead, t.CacheWrite, t.Completion}, []int64{m.InputPerM, m.CachedInputPerM, m.CacheWritePerM, m.OutputPerM})
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
// read from the cache or written to it.
func (m Model) dearestInputPerM() int64 {
	return max(m.InputPerM, m.CachedInputPerM, m.CacheWritePerM)
}
