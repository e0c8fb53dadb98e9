package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// chatBody is the chat-completion request, in this field order.
type chatBody struct {
	Model             string        `json:"model,omitempty"`
	Messages          []chatMessage `json:"messages"`
	Tools             []chatTool    `json:"tools,omitempty"`
	ToolChoice        any           `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool         `json:"parallel_tool_calls,omitempty"`
	Stop              []string      `json:"stop,omitempty"`
	Temperature       *float64      `json:"temperature,omitempty"`
	TopP              *float64      `json:"top_p,omitempty"`
	MaxTokens         *int64        `json:"max_completion_tokens,omitempty"`
	Stream            bool          `json:"stream,omitempty"`
	StreamOptions     *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`
	User *string `json:"user,omitempty"`
}

// ChatBody returns the equivalent chat-completion request (see the
// package doc), with include_usage for a stream (so message_delta carries
// the usage), then the gateway's routing fields as given.
func (r *Request) ChatBody() ([]byte, error) {
	b := chatBody{
		Model: r.model, Messages: r.messages, Stop: r.stop, Temperature: r.temperature, TopP: r.topP,
		MaxTokens: r.maxTokens, Stream: r.stream, User: r.user,
	}
	if len(r.tools) > 0 {
		b.Tools, b.ToolChoice, b.ParallelToolCalls = r.tools, r.toolChoice, r.parallel
	}
	if r.stream {
		b.StreamOptions = &struct {
			IncludeUsage bool `json:"include_usage"`
		}{true}
	}
	out, err := marshal(b)
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

// marshal encodes v without escaping <, > and & (text goes out as it was
// written).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}
