package anthropic

import (
	"encoding/json"

	"github.com/arr-dev/arr/domain/chat"
)

// messagesRequest is the Messages request Request writes, fields in the
// order they are sent.
type messagesRequest struct {
	Model         string        `json:"model"`
	MaxTokens     int64         `json:"max_tokens"`
	System        []block       `json:"system,omitempty"`
	Messages      []turn        `json:"messages"`
	Tools         []tool        `json:"tools,omitempty"`
	ToolChoice    *toolChoice   `json:"tool_choice,omitempty"`
	StopSequences []string      `json:"stop_sequences,omitempty"`
	Temperature   *float64      `json:"temperature,omitempty"`
	TopP          *float64      `json:"top_p,omitempty"`
	Thinking      *thinking     `json:"thinking,omitempty"`
	OutputConfig  *outputConfig `json:"output_config,omitempty"`
	Metadata      *metadata     `json:"metadata,omitempty"`
	CacheControl  *cacheControl `json:"cache_control,omitempty"`
	Stream        bool          `json:"stream,omitempty"`
}

// turn is one message of a Messages request.
type turn struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a content block of a request (text, image, document,
// tool_use, tool_result) or of a reply (text, tool_use, thinking, …).
type block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Source    *source         `json:"source,omitempty"`
	Title     string          `json:"title,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   []block         `json:"content,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
}

func textBlock(s string) block { return block{Type: "text", Text: &s} }

// source is an image's or a document's source: base64 data or a URL.
type source struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type tool struct {
	Name        string          `json:"name"`
	Description *string         `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	Strict      *bool           `json:"strict,omitempty"`
}

type toolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int64  `json:"budget_tokens"`
}

type outputConfig struct {
	Format outputFormat `json:"format"`
}

type outputFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
}

type metadata struct {
	UserID string `json:"user_id"`
}

type cacheControl struct {
	Type string `json:"type"`
}

// completion is the chat completion Reply writes: OpenAI's
// chat.completion object.
type completion struct {
	ID      string    `json:"id"`
	Object  string    `json:"object"`
	Created int64     `json:"created"`
	Model   string    `json:"model"`
	Choices []choice  `json:"choices"`
	Usage   *usageOut `json:"usage,omitempty"`
}

type choice struct {
	Index        int          `json:"index"`
	Message      replyMessage `json:"message"`
	Logprobs     *struct{}    `json:"logprobs"`
	FinishReason string       `json:"finish_reason"`
}

type replyMessage struct {
	Role             string          `json:"role"`
	Content          *string         `json:"content"`
	Refusal          *string         `json:"refusal"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chat.ToolCall `json:"tool_calls,omitempty"`
}

// toolCall is a tool call's delta in a chunk: the first has its id, type
// and name, the rest (index and arguments only) more of its arguments.
type toolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// usageOut is OpenAI's usage object, with the cache writes beside the
// cache reads in prompt_tokens_details.
type usageOut struct {
	PromptTokens        int64         `json:"prompt_tokens"`
	CompletionTokens    int64         `json:"completion_tokens"`
	TotalTokens         int64         `json:"total_tokens"`
	PromptTokensDetails promptDetails `json:"prompt_tokens_details"`
}

type promptDetails struct {
	CachedTokens     int64 `json:"cached_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
}

// chunk is a chat.completion.chunk.
type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *usageOut     `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        delta     `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type delta struct {
	Role             string     `json:"role,omitempty"`
	Content          *string    `json:"content,omitempty"`
	ReasoningContent *string    `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCall `json:"tool_calls,omitempty"`
}
