package bedrock

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/routing"
)

// ErrMalformed is the error of a Converse reply or stream event that
// cannot be read: the upstream's fault.
var ErrMalformed = errors.New("bedrock: a malformed reply")

// Meta is what a chat completion carries that a Converse reply does not:
// its id, creation time and model.
type Meta struct {
	ID      string
	Model   string
	Created int64
}

// Completion is a chat completion as ToChat writes it (OpenAI's shape).
type Completion struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ReplyChoice `json:"choices"`
	Usage   *chat.Usage   `json:"usage,omitempty"`
}

// ReplyChoice is the one choice of a Completion.
type ReplyChoice struct {
	Index        int          `json:"index"`
	Message      ReplyMessage `json:"message"`
	Logprobs     *struct{}    `json:"logprobs"`
	FinishReason string       `json:"finish_reason"`
}

// ReplyMessage is a choice's message.
type ReplyMessage struct {
	Role      string          `json:"role"`
	Content   *string         `json:"content"`
	ToolCalls []chat.ToolCall `json:"tool_calls,omitempty"`
}

// Result is a translated reply: the chat completion's JSON and the
// usage as Bedrock counted it (nil: the reply had none).
type Result struct {
	Body  []byte
	Usage *Usage
}

// ToChat translates a Converse reply into a chat completion.
func ToChat(reply []byte, p Plan, meta Meta) (Result, error) {
	var r Reply
	if err := json.Unmarshal(reply, &r); err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if r.Output.Message == nil || r.StopReason == "" {
		return Result{}, fmt.Errorf("%w: no output message or stopReason", ErrMalformed)
	}
	msg := ReplyMessage{Role: "assistant"}
	var text strings.Builder
	hasText := false
	finish := FinishReason(r.StopReason)
	jsonMode := p.JSONTool != ""
	for _, b := range r.Output.Message.Content {
		switch {
		case b.Text != nil && jsonMode:
			// A JSON-mode reply is the forced tool's input only: what the
			// model wrote before it is not JSON.
		case b.Text != nil:
			text.WriteString(*b.Text)
			hasText = true
		case b.ToolUse != nil && jsonMode && b.ToolUse.Name == p.JSONTool:
			text.Write(b.ToolUse.Input)
			hasText = true
			if finish == "tool_calls" {
				finish = "stop"
			}
		case b.ToolUse != nil:
			args := string(b.ToolUse.Input)
			if args == "" || args == "null" {
				args = "{}"
			}
			msg.ToolCalls = append(msg.ToolCalls, chat.ToolCall{ID: p.clientID(b.ToolUse.ToolUseID), Type: "function", Function: chat.FunctionCall{Name: b.ToolUse.Name, Arguments: args}})
		}
	}
	if hasText || len(msg.ToolCalls) == 0 {
		s := text.String()
		msg.Content = &s
	}
	c := Completion{ID: meta.ID, Object: "chat.completion", Created: meta.Created, Model: meta.Model,
		Choices: []ReplyChoice{{Message: msg, FinishReason: finish}}}
	if r.Usage != nil {
		if err := r.Usage.check(); err != nil {
			return Result{}, err
		}
		c.Usage = r.Usage.Chat()
	}
	body, err := chat.Marshal(c, chat.EscapeHTML)
	if err != nil {
		return Result{}, fmt.Errorf("bedrock: encoding the chat completion: %w", err)
	}
	return Result{Body: body, Usage: r.Usage}, nil
}

// FinishReason is the chat finish_reason of a Converse stopReason.
func FinishReason(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "guardrail_intervened", "content_filtered":
		return "content_filter"
	}
	return "stop"
}

// check refuses a count below zero or above routing.MaxTokenCount, and
// counts whose sum, the prompt, is above it: routing.Tokens keeps the
// cache counts within a prompt of at most MaxTokenCount, so such a
// usage could be billed only with a part of it dropped.
func (u Usage) check() error {
	for _, n := range []int64{u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheWriteInputTokens} {
		if n < 0 || n > routing.MaxTokenCount {
			return fmt.Errorf("%w: a usage count %d out of range (0 to 2^40)", ErrMalformed, n)
		}
	}
	// Each count is at most 2^40: the sum cannot overflow.
	if p := u.PromptTokens(); p > routing.MaxTokenCount {
		return fmt.Errorf("%w: the usage's input counts sum to %d, over 2^40", ErrMalformed, p)
	}
	return nil
}

// Chat is the usage as chat counts it: prompt_tokens every input token,
// cached_tokens the cache reads among them.
func (u Usage) Chat() *chat.Usage {
	p := u.PromptTokens()
	return &chat.Usage{PromptTokens: p, CompletionTokens: u.OutputTokens, TotalTokens: p + u.OutputTokens,
		PromptTokensDetails: &chat.PromptTokensDetails{CachedTokens: u.CacheReadInputTokens}}
}

// Tokens is the usage as the gateway prices it.
func (u Usage) Tokens() routing.Tokens {
	return routing.Tokens{Prompt: u.PromptTokens(), Completion: u.OutputTokens, CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheWriteInputTokens}.Clamped()
}
