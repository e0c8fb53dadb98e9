package bedrock

import "encoding/json"

// Request is a Converse (and ConverseStream) request body; the model is
// in the URL, not here.
type Request struct {
	Messages        []Message        `json:"messages"`
	System          []SystemBlock    `json:"system,omitempty"`
	InferenceConfig *InferenceConfig `json:"inferenceConfig,omitempty"`
	ToolConfig      *ToolConfig      `json:"toolConfig,omitempty"`
}

// Message is one turn: role "user" or "assistant".
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// Block is one content block; exactly one field is set.
type Block struct {
	Text       *string     `json:"text,omitempty"`
	Image      *Image      `json:"image,omitempty"`
	ToolUse    *ToolUse    `json:"toolUse,omitempty"`
	ToolResult *ToolResult `json:"toolResult,omitempty"`
	CachePoint *CachePoint `json:"cachePoint,omitempty"`
	// ReasoningContent is a reply's reasoning block, read and dropped.
	ReasoningContent json.RawMessage `json:"reasoningContent,omitempty"`
}

// SystemBlock is a system prompt block: text or a cache point.
type SystemBlock struct {
	Text       *string     `json:"text,omitempty"`
	CachePoint *CachePoint `json:"cachePoint,omitempty"`
}

// CachePoint marks the end of a prefix for the prompt cache.
type CachePoint struct {
	Type string `json:"type"`
}

// defaultCachePoint is the one kind of cache point.
func defaultCachePoint() *CachePoint { return &CachePoint{Type: "default"} }

// Image is an image block: its format and bytes (base64 in JSON).
type Image struct {
	Format string      `json:"format"`
	Source ImageSource `json:"source"`
}

// ImageSource holds an image's bytes.
type ImageSource struct {
	Bytes []byte `json:"bytes"`
}

// ToolUse is a model's call of a tool; Input is a JSON object.
type ToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

// ToolResult is a tool's result, in a user message.
type ToolResult struct {
	ToolUseID string              `json:"toolUseId"`
	Content   []ToolResultContent `json:"content"`
}

// ToolResultContent is a tool result's text.
type ToolResultContent struct {
	Text *string `json:"text,omitempty"`
}

// ToolConfig is the tools offered and the choice among them.
type ToolConfig struct {
	Tools      []Tool      `json:"tools"`
	ToolChoice *ToolChoice `json:"toolChoice,omitempty"`
}

// Tool is a tool specification or a cache point.
type Tool struct {
	ToolSpec   *ToolSpec   `json:"toolSpec,omitempty"`
	CachePoint *CachePoint `json:"cachePoint,omitempty"`
}

// ToolSpec declares a tool.
type ToolSpec struct {
	Name        string      `json:"name"`
	Description *string     `json:"description,omitempty"`
	InputSchema InputSchema `json:"inputSchema"`
}

// InputSchema is a tool's JSON schema.
type InputSchema struct {
	JSON json.RawMessage `json:"json"`
}

// ToolChoice is one of auto, any (some tool) or a named tool.
type ToolChoice struct {
	Auto *struct{}  `json:"auto,omitempty"`
	Any  *struct{}  `json:"any,omitempty"`
	Tool *NamedTool `json:"tool,omitempty"`
}

// NamedTool names the tool a ToolChoice forces.
type NamedTool struct {
	Name string `json:"name"`
}

// InferenceConfig is the sampling settings.
type InferenceConfig struct {
	MaxTokens     *int64   `json:"maxTokens,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"topP,omitempty"`
	StopSequences []string `json:"stopSequences,omitempty"`
}

// Reply is a Converse reply, as read.
type Reply struct {
	Output struct {
		Message *Message `json:"message"`
	} `json:"output"`
	StopReason string `json:"stopReason"`
	Usage      *Usage `json:"usage"`
}

// Usage is Bedrock's token counts: InputTokens the uncached input,
// CacheReadInputTokens read from the prompt cache, CacheWriteInputTokens
// written to it.
type Usage struct {
	InputTokens           int64 `json:"inputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
	TotalTokens           int64 `json:"totalTokens"`
	CacheReadInputTokens  int64 `json:"cacheReadInputTokens,omitempty"`
	CacheWriteInputTokens int64 `json:"cacheWriteInputTokens,omitempty"`
}

// PromptTokens is every input token: uncached, read from and written to
// the cache.
func (u Usage) PromptTokens() int64 {
	return u.InputTokens + u.CacheReadInputTokens + u.CacheWriteInputTokens
}
