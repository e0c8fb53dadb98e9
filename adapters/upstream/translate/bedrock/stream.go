package bedrock

import (
	"encoding/json"
	"fmt"

	"github.com/arr-dev/arr/domain/chat"
)

// The ConverseStream events (the :event-type of each frame).
const (
	EventMessageStart      = "messageStart"
	EventContentBlockStart = "contentBlockStart"
	EventContentBlockDelta = "contentBlockDelta"
	EventContentBlockStop  = "contentBlockStop"
	EventMessageStop       = "messageStop"
	EventMetadata          = "metadata"
)

// Chunk is a chat completion chunk as a Streamer writes it (OpenAI's
// shape).
type Chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
	Usage   *chat.Usage   `json:"usage,omitempty"`
}

// ChunkChoice is a chunk's choice.
type ChunkChoice struct {
	Index        int       `json:"index"`
	Delta        Delta     `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// Delta is what a chunk adds to the message.
type Delta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []ToolCallDelta `json:"tool_calls,omitempty"`
}

// ToolCallDelta is a tool call's first delta (id, type and name) or one
// of its arguments' pieces.
type ToolCallDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function FunctionDelta `json:"function"`
}

// FunctionDelta is a tool call delta's function.
type FunctionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// Streamer translates one ConverseStream's events into chat chunks, in
// the stream's order: messageStart first, then the content blocks,
// messageStop, metadata. Not safe for concurrent use.
type Streamer struct {
	plan    Plan
	meta    Meta
	started bool
	stopped bool
	// ended: the metadata event came (after messageStop), the last.
	ended bool
	usage *Usage
	// calls maps a toolUse block's index to its tool call's index.
	calls map[int]int
	// jsonBlocks are the blocks of the JSON-mode tool, sent as text.
	jsonBlocks map[int]bool
}

// NewStreamer returns a Streamer of a request planned as p.
func NewStreamer(p Plan, meta Meta) *Streamer {
	return &Streamer{plan: p, meta: meta, calls: map[int]int{}, jsonBlocks: map[int]bool{}}
}

// Stopped: messageStop came.
func (s *Streamer) Stopped() bool { return s.stopped }

// Ended: messageStop came, then the metadata event with the usage; the
// stream may end (one that ends before is cut: its usage is unknown).
func (s *Streamer) Ended() bool { return s.stopped && s.ended }

// Usage is the metadata event's usage (nil until it came).
func (s *Streamer) Usage() *Usage { return s.usage }

// event is the part of a stream event's payload a Streamer reads.
type event struct {
	Role              string `json:"role"`
	ContentBlockIndex int    `json:"contentBlockIndex"`
	Start             *struct {
		ToolUse *struct {
			ToolUseID string `json:"toolUseId"`
			Name      string `json:"name"`
		} `json:"toolUse"`
	} `json:"start"`
	Delta *struct {
		Text    *string `json:"text"`
		ToolUse *struct {
			Input string `json:"input"`
		} `json:"toolUse"`
	} `json:"delta"`
	StopReason string `json:"stopReason"`
	Usage      *Usage `json:"usage"`
}

// Event translates one event (its :event-type and JSON payload) into the
// chunks it makes (none for some); an error is a payload that cannot be
// read or an event out of order (ErrMalformed).
func (s *Streamer) Event(name string, payload []byte) ([][]byte, error) {
	var ev event
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("%w: %s event: %v", ErrMalformed, name, err)
	}
	switch {
	case name == EventMessageStart && s.started:
		return nil, fmt.Errorf("%w: a second messageStart", ErrMalformed)
	case name == EventMessageStart:
		s.started = true
		empty := ""
		return s.chunk(Delta{Role: "assistant", Content: &empty}, nil)
	case !s.started:
		return nil, fmt.Errorf("%w: %s before messageStart", ErrMalformed, name)
	case s.ended:
		return nil, fmt.Errorf("%w: %s after the metadata event", ErrMalformed, name)
	case name == EventMetadata:
		if ev.Usage == nil {
			return nil, fmt.Errorf("%w: a metadata event without its usage", ErrMalformed)
		}
		if err := ev.Usage.check(); err != nil {
			return nil, err
		}
		s.usage, s.ended = ev.Usage, true
		return s.usageChunk()
	case s.stopped:
		return nil, fmt.Errorf("%w: %s after messageStop", ErrMalformed, name)
	case name == EventMessageStop:
		s.stopped = true
		finish := FinishReason(ev.StopReason)
		if finish == "tool_calls" && len(s.calls) == 0 && len(s.jsonBlocks) > 0 {
			finish = "stop"
		}
		return s.chunk(Delta{}, &finish)
	case name == EventContentBlockStart:
		return s.blockStart(ev)
	case name == EventContentBlockDelta:
		return s.blockDelta(ev)
	}
	return nil, nil
}

func (s *Streamer) blockStart(ev event) ([][]byte, error) {
	if ev.Start == nil || ev.Start.ToolUse == nil {
		return nil, nil
	}
	tu := ev.Start.ToolUse
	if s.plan.JSONTool != "" && tu.Name == s.plan.JSONTool {
		s.jsonBlocks[ev.ContentBlockIndex] = true
		return nil, nil
	}
	if _, ok := s.calls[ev.ContentBlockIndex]; ok {
		return nil, fmt.Errorf("%w: a second start of block %d", ErrMalformed, ev.ContentBlockIndex)
	}
	i := len(s.calls)
	s.calls[ev.ContentBlockIndex] = i
	return s.chunk(Delta{ToolCalls: []ToolCallDelta{{Index: i, ID: s.plan.clientID(tu.ToolUseID), Type: "function", Function: FunctionDelta{Name: tu.Name}}}}, nil)
}

func (s *Streamer) blockDelta(ev event) ([][]byte, error) {
	switch {
	case ev.Delta == nil:
		return nil, nil
	case ev.Delta.Text != nil && s.plan.JSONTool != "":
		// A JSON-mode reply is the forced tool's input only.
		return nil, nil
	case ev.Delta.Text != nil:
		return s.chunk(Delta{Content: ev.Delta.Text}, nil)
	case ev.Delta.ToolUse != nil && s.jsonBlocks[ev.ContentBlockIndex]:
		return s.chunk(Delta{Content: &ev.Delta.ToolUse.Input}, nil)
	case ev.Delta.ToolUse != nil:
		i, ok := s.calls[ev.ContentBlockIndex]
		if !ok {
			return nil, fmt.Errorf("%w: a toolUse delta of block %d, never started", ErrMalformed, ev.ContentBlockIndex)
		}
		return s.chunk(Delta{ToolCalls: []ToolCallDelta{{Index: i, Function: FunctionDelta{Arguments: ev.Delta.ToolUse.Input}}}}, nil)
	}
	// Reasoning deltas and kinds not known here are not passed on.
	return nil, nil
}

func (s *Streamer) chunk(d Delta, finish *string) ([][]byte, error) {
	c := Chunk{ID: s.meta.ID, Object: "chat.completion.chunk", Created: s.meta.Created, Model: s.meta.Model,
		Choices: []ChunkChoice{{Delta: d, FinishReason: finish}}}
	return s.encode(c)
}

func (s *Streamer) usageChunk() ([][]byte, error) {
	c := Chunk{ID: s.meta.ID, Object: "chat.completion.chunk", Created: s.meta.Created, Model: s.meta.Model,
		Choices: []ChunkChoice{}, Usage: s.usage.Chat()}
	return s.encode(c)
}

func (s *Streamer) encode(c Chunk) ([][]byte, error) {
	b, err := chat.Marshal(c, chat.EscapeHTML)
	if err != nil {
		return nil, fmt.Errorf("bedrock: encoding a chunk: %w", err)
	}
	return [][]byte{b}, nil
}
