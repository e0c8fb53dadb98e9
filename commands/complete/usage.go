package complete

import (
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/routing"
)

// Usage is a completion's token counts; Estimated when the upstream
// reported none and they were counted from the text. Prompt is every
// input token, of which CacheRead were read from the upstream's prompt
// cache and CacheWrite written to it (routing.Tokens).
type Usage struct {
	Prompt     int64
	Completion int64
	CacheRead  int64
	CacheWrite int64
	// CacheWrite1h and WebSearches: routing.Tokens'.
	CacheWrite1h int64
	WebSearches  int64
	Estimated    bool
}

// Tokens are the counts the usage is priced by.
func (u Usage) Tokens() routing.Tokens {
	return routing.Tokens{Prompt: u.Prompt, Completion: u.Completion, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite,
		CacheWrite1h: u.CacheWrite1h, WebSearches: u.WebSearches}
}

// usageOf is the usage an upstream reported: OpenAI's counts, its cached
// tokens as cache reads (kept within the prompt).
func usageOf(c *chat.TokenCounts) Usage {
	t := routing.Tokens{Prompt: c.PromptTokens, Completion: c.CompletionTokens, CacheRead: c.CachedTokens()}.Clamped()
	return Usage{Prompt: t.Prompt, Completion: t.Completion, CacheRead: t.CacheRead}
}

// OpenAI is the usage as OpenAI's usage object: prompt, completion and
// total tokens, and prompt_tokens_details.cached_tokens when the upstream
// read any from its prompt cache.
func (u Usage) OpenAI() map[string]any {
	m := map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Prompt + u.Completion}
	if u.CacheRead > 0 {
		m["prompt_tokens_details"] = map[string]any{"cached_tokens": u.CacheRead}
	}
	return m
}
