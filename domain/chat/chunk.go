package chat

import "encoding/json"

// Chunk is one chunk (chat.completion.chunk) of a streamed reply, as the
// gateway reads it; the gateway's last chunk carries Routing.
type Chunk struct {
	ID      string          `json:"id"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []ChunkChoice   `json:"choices"`
	Usage   *Usage          `json:"usage"`
	Routing json.RawMessage `json:"routing"`
}

// ChunkChoice is one choice's delta in a Chunk.
type ChunkChoice struct {
	Index        int     `json:"index"`
	Delta        Delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

// Delta is what a chunk adds to a choice's message.
type Delta struct {
	Content   *string         `json:"content"`
	Refusal   *string         `json:"refusal"`
	ToolCalls []ToolCallDelta `json:"tool_calls"`
}

// ToolCallDelta is what a chunk adds to the tool call at Index: the
// first delta of a call has its id, type and name, the rest more of its
// arguments.
type ToolCallDelta struct {
	Index    int          `json:"index"`
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}
