package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// chatBody is the chat-completion request, in this field order.
type chatBody struct {
	Model               string        `json:"model,omitempty"`
	Messages            []chatMessage `json:"messages"`
	Tools               []chatTool    `json:"tools,omitempty"`
	ToolChoice          any           `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool         `json:"parallel_tool_calls,omitempty"`
	ResponseFormat      any           `json:"response_format,omitempty"`
	Verbosity           string        `json:"verbosity,omitempty"`
	ReasoningEffort     string        `json:"reasoning_effort,omitempty"`
	Temperature         *float64      `json:"temperature,omitempty"`
	TopP                *float64      `json:"top_p,omitempty"`
	MaxCompletionTokens *int64        `json:"max_completion_tokens,omitempty"`
	Stream              bool          `json:"stream,omitempty"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
	User             *string `json:"user,omitempty"`
	SafetyIdentifier *string `json:"safety_identifier,omitempty"`
	PromptCacheKey   *string `json:"prompt_cache_key,omitempty"`
}

// ChatBody returns the equivalent chat-completion request: instructions
// and input as messages, function tools, tool_choice, text.format as
// response_format, max_output_tokens as max_completion_tokens, and for a
// stream include_usage (so response.completed carries the usage), then
// the gateway's routing fields as given.
func (r *Request) ChatBody() ([]byte, error) {
	b := chatBody{
		Model: r.model, Messages: r.messages, ToolChoice: r.chatToolChoice, ResponseFormat: r.chatFormat,
		Verbosity: r.verbosity, ReasoningEffort: r.effort, Temperature: r.temperature, TopP: r.topP,
		MaxCompletionTokens: r.maxOutput, Stream: r.stream,
		User: r.user, SafetyIdentifier: r.safetyID, PromptCacheKey: r.promptCacheKey,
	}
	for _, t := range r.tools {
		var ct chatTool
		ct.Type = "function"
		ct.Function.Name, ct.Function.Description, ct.Function.Parameters, ct.Function.Strict = t.Name, t.Description, t.Parameters, t.Strict
		b.Tools = append(b.Tools, ct)
	}
	if len(r.tools) > 0 {
		b.ParallelToolCalls = r.parallel
	}
	if r.stream {
		b.StreamOptions = &struct {
			IncludeUsage bool `json:"include_usage"`
		}{true}
	}
	out, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encoding the chat request: %w", err)
	}
	if len(r.arr) == 0 {
		return out, nil
	}
	var buf bytes.Buffer
	buf.Write(out[:len(out)-1])
	for _, f := range r.arr {
		name, _ := json.Marshal(f.name)
		buf.WriteByte(',')
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(f.raw)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
