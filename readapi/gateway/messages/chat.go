package messages

import (
	"github.com/arr-dev/arr/domain/chat"
)

// ChatBody returns the equivalent chat-completion request (see the
// package doc), with include_usage for a stream (so message_delta carries
// the usage), then the gateway's routing fields as given. The Messages
// route writes text as it was written (chat.Verbatim).
func (r *Request) ChatBody() ([]byte, error) {
	b := chat.Request{
		Model: r.model, Messages: r.messages, Stop: r.stop, Temperature: r.temperature, TopP: r.topP,
		MaxCompletionTokens: r.maxTokens, Stream: r.stream, User: r.user,
	}
	if len(r.tools) > 0 {
		b.Tools, b.ToolChoice, b.ParallelToolCalls = r.tools, r.toolChoice, r.parallel
	}
	if r.stream {
		b.StreamOptions = &chat.StreamOptions{IncludeUsage: true}
	}
	return chat.Body(&b, r.arr, chat.Verbatim)
}

// marshal encodes v without escaping <, > and & (text goes out as it was
// written).
func marshal(v any) ([]byte, error) { return chat.Marshal(v, chat.Verbatim) }
