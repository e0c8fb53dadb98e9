package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	wire "github.com/arr-dev/arr/domain/anthropic"
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/routing"
)

// ErrMalformed is the error of a reply or stream event that is not what
// Anthropic's API sends (the upstream's fault, never the client's).
var ErrMalformed = errors.New("malformed Anthropic reply")

// ChatReply is a Messages reply as a chat completion.
type ChatReply struct {
	// Body is the chat.completion object.
	Body []byte
	// FinishReason is its choice's finish_reason.
	FinishReason string
	// Tokens are its counts as arr prices them: Prompt is every input
	// token, CacheRead of them read from the prompt cache, CacheWrite
	// written to it.
	Tokens routing.Tokens
}

// replyIn is what Reply reads of a Messages reply.
type replyIn struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	Model      string    `json:"model"`
	Content    []blockIn `json:"content"`
	StopReason *string   `json:"stop_reason"`
}

// blockIn is a content block of a reply (or a stream's
// content_block_start).
type blockIn struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	Thinking string          `json:"thinking"`
}

// Reply translates a Messages reply into a chat completion created at
// created (Unix seconds): text blocks joined, tool_use blocks as
// tool_calls, thinking blocks as reasoning_content (redacted thinking
// and blocks of server tools, which arr never asks for, dropped).
func Reply(body []byte, created int64) (ChatReply, error) {
	var m replyIn
	if err := json.Unmarshal(body, &m); err != nil {
		return ChatReply{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if m.Type != "message" {
		return ChatReply{}, fmt.Errorf("%w: its type is %q, not message", ErrMalformed, m.Type)
	}
	u, err := wire.ReplyUsage(body)
	if err != nil {
		return ChatReply{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	msg := replyMessage{Role: "assistant"}
	var text, reasoning strings.Builder
	for i, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			reasoning.WriteString(b.Thinking)
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return ChatReply{}, fmt.Errorf("%w: content[%d]: a tool_use block without id or name", ErrMalformed, i)
			}
			args, err := arguments(b.Input)
			if err != nil {
				return ChatReply{}, fmt.Errorf("%w: content[%d]: %v", ErrMalformed, i, err)
			}
			msg.ToolCalls = append(msg.ToolCalls, chat.ToolCall{ID: b.ID, Type: "function", Function: chat.FunctionCall{Name: b.Name, Arguments: args}})
		}
	}
	if s := text.String(); s != "" || len(msg.ToolCalls) == 0 {
		msg.Content = &s
	}
	if s := reasoning.String(); s != "" {
		msg.ReasoningContent = &s
	}
	stop := ""
	if m.StopReason != nil {
		stop = *m.StopReason
	}
	finish := FinishReason(stop)
	c := completion{ID: m.ID, Object: "chat.completion", Created: created, Model: m.Model,
		Choices: []choice{{Message: msg, FinishReason: finish}}, Usage: usageOf(u)}
	out, err := chat.Marshal(&c, chat.EscapeHTML)
	if err != nil {
		return ChatReply{}, fmt.Errorf("encoding the chat completion: %w", err)
	}
	return ChatReply{Body: out, FinishReason: finish, Tokens: TokensOf(u)}, nil
}

// arguments is a tool_use input as a tool call's arguments: the JSON
// object, compacted ({} when absent).
func arguments(input json.RawMessage) (string, error) {
	input = bytes.TrimSpace(input)
	if len(input) == 0 || string(input) == "null" {
		return "{}", nil
	}
	if input[0] != '{' {
		return "", errors.New("a tool_use input that is not a JSON object")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, input); err != nil {
		return "", err
	}
	return b.String(), nil
}

// FinishReason maps Anthropic's stop_reason to chat's finish_reason:
// end_turn, stop_sequence and pause_turn (a server tool's turn paused;
// arr asks for none) stop; max_tokens and model_context_window_exceeded
// length; tool_use tool_calls; refusal content_filter; anything else
// stop. It is the inverse of readapi/gateway/messages.StopReason on
// the stop reasons both have.
func FinishReason(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "refusal":
		return "content_filter"
	}
	return "stop"
}

// TokensOf is an Anthropic usage as arr counts it: every input token
// (uncached, read from and written to the cache) in Prompt, the reads in
// CacheRead, the writes in CacheWrite (those to the 1-hour cache in
// CacheWrite1h), the web searches in WebSearches.
func TokensOf(u wire.Usage) routing.Tokens {
	return routing.Tokens{Prompt: u.PromptTokens(), Completion: u.OutputTokens,
		CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens,
		CacheWrite1h: u.CacheCreation1hInputTokens, WebSearches: u.WebSearchRequests}.Clamped()
}

// usageOf is an Anthropic usage as OpenAI's usage object.
func usageOf(u wire.Usage) *usageOut {
	t := TokensOf(u)
	return &usageOut{PromptTokens: t.Prompt, CompletionTokens: t.Completion, TotalTokens: t.Prompt + t.Completion,
		PromptTokensDetails: promptDetails{CachedTokens: t.CacheRead, CacheWriteTokens: t.CacheWrite}}
}
