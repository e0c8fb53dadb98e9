package routing

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

// Clamped is t with its cache counts kept within the prompt: CacheRead in
// [0, Prompt], CacheWrite in [0, Prompt-CacheRead]: an upstream that
// reports more cached tokens than prompt tokens (or negative counts) has
// at most its whole prompt cached.
func (t Tokens) Clamped() Tokens {
	p := max(t.Prompt, 0)
	t.CacheRead = min(max(t.CacheRead, 0), p)
	t.CacheWrite = min(max(t.CacheWrite, 0), p-t.CacheRead)
	return t
}

// Cost is the price of a request with these token counts, in
// micro-dollars, rounded up: plain input at the input price, cache reads
// at the cached-input price, cache writes at the cache-write price, output
// at the output price (the cache counts clamped to the prompt, Clamped).
func (m Model) Cost(t Tokens) MicroUSD {
	t = t.Clamped()
	plain := t.Prompt - t.CacheRead - t.CacheWrite
	n := plain*m.InputPerM + t.CacheRead*m.CachedInputPerM + t.CacheWrite*m.CacheWritePerM + t.Completion*m.OutputPerM
	return (n + 999_999) / 1_000_000
}

// MaxCost is the most a request of promptTokens input and
// completionTokens output tokens can cost, however its prompt splits into
// plain input, cache reads and cache writes: every prompt token at the
// dearest of the three prices. It is what a reservation holds.
func (m Model) MaxCost(promptTokens, completionTokens int64) MicroUSD {
	n := promptTokens*m.dearestInputPerM() + completionTokens*m.OutputPerM
	return (n + 999_999) / 1_000_000
}

// dearestInputPerM is the dearest price a prompt token can cost: plain,
// read from the cache or written to it.
func (m Model) dearestInputPerM() int64 {
	return max(m.InputPerM, m.CachedInputPerM, m.CacheWritePerM)
}
