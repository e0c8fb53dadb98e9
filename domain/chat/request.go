package chat

import "encoding/json"

// Request is a chat-completion request, fields in the order they are
// sent. Every optional field is omitted when unset, so a dialect sets
// only what its API has.
type Request struct {
	Model               string         `json:"model,omitempty"`
	Messages            []Message      `json:"messages"`
	Tools               []Tool         `json:"tools,omitempty"`
	ToolChoice          any            `json:"tool_choice,omitempty"` // "auto", "required", "none", a NamedToolChoice or an allowed_tools object
	ParallelToolCalls   *bool          `json:"parallel_tool_calls,omitempty"`
	Stop                []string       `json:"stop,omitempty"`
	ResponseFormat      any            `json:"response_format,omitempty"`
	Verbosity           string         `json:"verbosity,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	TopP                *float64       `json:"top_p,omitempty"`
	MaxCompletionTokens *int64         `json:"max_completion_tokens,omitempty"`
	Stream              bool           `json:"stream,omitempty"`
	StreamOptions       *StreamOptions `json:"stream_options,omitempty"`
	User                *string        `json:"user,omitempty"`
	SafetyIdentifier    *string        `json:"safety_identifier,omitempty"`
	PromptCacheKey      *string        `json:"prompt_cache_key,omitempty"`
}

// StreamOptions are a streamed request's options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Message is one message of a request.
type Message struct {
	Role       string     `json:"role"`
	Content    any        `json:"content"` // a string, []Part or nil (null)
	Refusal    *string    `json:"refusal,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Part is a content part of a message: text, image_url or file.
type Part struct {
	Type     string    `json:"type"`
	Text     *string   `json:"text,omitempty"`
	ImageURL *ImageURL `json:"image_url,omitempty"`
	File     *File     `json:"file,omitempty"`
}

// TextPart is a text part.
func TextPart(s string) Part { return Part{Type: "text", Text: &s} }

// ImageURL is an image_url part's image: a URL or a data: URL.
type ImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// File is a file part's file, inline.
type File struct {
	FileData string `json:"file_data"`
	Filename string `json:"filename,omitempty"`
}

// ToolCall is a call of a function tool, in an assistant message or a
// reply.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function a ToolCall calls and its arguments (a
// JSON text).
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a function tool of a request.
type Tool struct {
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is a function tool's declaration.
type Function struct {
	Name        string          `json:"name"`
	Description *string         `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// NamedToolChoice is a tool_choice naming one function.
type NamedToolChoice struct {
	Type     string       `json:"type"`
	Function FunctionName `json:"function"`
}

// FunctionName names a function.
type FunctionName struct {
	Name string `json:"name"`
}
