package chat

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Completion is a non-streamed reply, as the gateway reads it.
type Completion struct {
	ID      string   `json:"id"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   *Usage   `json:"usage"`
	// Routing is the gateway's routing object, spliced into the reply it
	// answers with (or an upstream's field of that name: another gateway
	// in front of it).
	Routing json.RawMessage `json:"routing"`
}

// Summary is what the gateway reads of an upstream's non-streamed chat
// completion to count, cache and route it: the choices' finish reasons and
// text, the usage, and a routing field. It reads nothing else, so a reply
// whose other fields are shaped otherwise than OpenAI's (tool call
// arguments as an object, a numeric id, as some compatible servers send)
// is still relayed as the upstream sent it; the dialects that translate a
// reply read it whole (Completion).
type Summary struct {
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage   *TokenCounts    `json:"usage"`
	Routing json.RawMessage `json:"routing"`
}

// Choice is one choice of a Completion.
type Choice struct {
	Index        int          `json:"index"`
	Message      ReplyMessage `json:"message"`
	FinishReason string       `json:"finish_reason"`
}

// ReplyMessage is a choice's message.
type ReplyMessage struct {
	Content   *string    `json:"content"`
	Refusal   *string    `json:"refusal"`
	ToolCalls []ToolCall `json:"tool_calls"`
}

// ReadCompletion reads a completion and its First choice; one without a
// choice is an error.
func ReadCompletion(b []byte) (Completion, Choice, error) {
	var c Completion
	if err := json.Unmarshal(b, &c); err != nil {
		// The message names the field by its JSON path only, never by a
		// Go type of this package (it reaches the client).
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			te.Struct = ""
		}
		return Completion{}, Choice{}, fmt.Errorf("reading the chat completion: %w", err)
	}
	ch, ok := c.First()
	if !ok {
		return Completion{}, Choice{}, errors.New("the chat completion has no choices")
	}
	return c, ch, nil
}

// First is the choice of index 0 (the first choice when none has it);
// false when there is none.
func (c *Completion) First() (Choice, bool) {
	if len(c.Choices) == 0 {
		return Choice{}, false
	}
	for _, ch := range c.Choices {
		if ch.Index == 0 {
			return ch, true
		}
	}
	return c.Choices[0], true
}

// Usage is a reply's (or a stream's usage chunk's) token counts.
type Usage struct {
	PromptTokens            int64                    `json:"prompt_tokens"`
	CompletionTokens        int64                    `json:"completion_tokens"`
	TotalTokens             int64                    `json:"total_tokens"`
	PromptTokensDetails     *PromptTokensDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails *CompletionTokensDetails `json:"completion_tokens_details"`
}

// PromptTokensDetails: the prompt tokens read from the upstream's
// prompt cache.
type PromptTokensDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

// CompletionTokensDetails: the completion tokens spent reasoning.
type CompletionTokensDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}
