package responses

import (
	"github.com/arr-dev/arr/domain/chat"
)

// ChatBody returns the equivalent chat-completion request: instructions
// and input as messages, function tools, tool_choice, text.format as
// response_format, max_output_tokens as max_completion_tokens, and for a
// stream include_usage (so response.completed carries the usage), then
// the gateway's routing fields as given. The Responses route has always
// sent its chat request HTML-escaped (chat.EscapeHTML).
func (r *Request) ChatBody() ([]byte, error) {
	b := chat.Request{
		Model: r.model, Messages: r.messages, ToolChoice: r.chatToolChoice, ResponseFormat: r.chatFormat,
		Verbosity: r.verbosity, ReasoningEffort: r.effort, Temperature: r.temperature, TopP: r.topP,
		MaxCompletionTokens: r.maxOutput, Stream: r.stream,
		User: r.user, SafetyIdentifier: r.safetyID, PromptCacheKey: r.promptCacheKey,
	}
	for _, t := range r.tools {
		b.Tools = append(b.Tools, chat.Tool{Type: "function", Function: chat.Function{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict}})
	}
	if len(r.tools) > 0 {
		b.ParallelToolCalls = r.parallel
	}
	if r.stream {
		b.StreamOptions = &chat.StreamOptions{IncludeUsage: true}
	}
	return chat.Body(&b, r.arr, chat.EscapeHTML)
}
