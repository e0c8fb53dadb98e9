package chat

import (
	"encoding/json"
	"math"
)

// Chunk is one chunk (chat.completion.chunk) of a streamed reply, as the
// gateway reads it; the gateway's last chunk carries Routing.
type Chunk struct {
	ID      string          `json:"id"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []ChunkChoice   `json:"choices"`
	Usage   *Usage          `json:"usage"`
	Routing json.RawMessage `json:"routing"`
}

// ChunkChoice is one choice's delta in a Chunk.
type ChunkChoice struct {
	Index        int     `json:"index"`
	Delta        Delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

// Delta is what a chunk adds to a choice's message.
type Delta struct {
	Content   *string         `json:"content"`
	Refusal   *string         `json:"refusal"`
	ToolCalls []ToolCallDelta `json:"tool_calls"`
}

// ToolCallDelta is what a chunk adds to the tool call at Index: the
// first delta of a call has its id, type and name, the rest more of its
// arguments.
type ToolCallDelta struct {
	Index    int          `json:"index"`
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// ChunkSummary is what the gateway reads of an upstream's stream chunk to
// count, assemble and cache the stream: ids, text, tool calls, finish
// reasons and token counts. It reads nothing else (not total_tokens, the
// usage details but the cached prompt tokens, refusal or routing), so a
// chunk whose other fields are shaped otherwise than OpenAI's
// (total_tokens as a string, as some compatible servers send) is still
// counted and assembled; the dialects that translate a stream read it
// whole (Chunk).
type ChunkSummary struct {
	ID      string               `json:"id"`
	Created int64                `json:"created"`
	Model   string               `json:"model"`
	Choices []ChunkChoiceSummary `json:"choices"`
	Usage   *TokenCounts         `json:"usage"`
}

// ChunkChoiceSummary is what a ChunkSummary reads of a choice.
type ChunkChoiceSummary struct {
	Index int `json:"index"`
	Delta struct {
		Content   *string         `json:"content"`
		ToolCalls []ToolCallDelta `json:"tool_calls"`
	} `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

// TokenCounts is the part of a usage object the gateway counts by. Its
// prompt_tokens_details are kept raw and read by CachedTokens, so a
// compatible server that shapes them otherwise still has its reply
// counted.
type TokenCounts struct {
	PromptTokens        int64           `json:"prompt_tokens"`
	CompletionTokens    int64           `json:"completion_tokens"`
	PromptTokensDetails json.RawMessage `json:"prompt_tokens_details"`
}

// CachedTokens is prompt_tokens_details.cached_tokens: the prompt tokens
// the upstream read from its prompt cache (part of PromptTokens, as
// OpenAI counts them); 0 when the details are absent, null or not shaped
// as OpenAI's.
func (t *TokenCounts) CachedTokens() int64 {
	// A whole number in any JSON form (1024 or 1024.0) counts.
	var d struct {
		CachedTokens float64 `json:"cached_tokens"`
	}
	if len(t.PromptTokensDetails) == 0 || json.Unmarshal(t.PromptTokensDetails, &d) != nil ||
		d.CachedTokens != math.Trunc(d.CachedTokens) || d.CachedTokens < 0 || d.CachedTokens > 1<<53 {
		return 0
	}
	return int64(d.CachedTokens)
}
