package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	wire "github.com/arr-dev/arr/domain/anthropic"
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/routing"
)

// StreamOptions are a Stream's settings.
type StreamOptions struct {
	// Created is the chunks' created time (Unix seconds).
	Created int64
	// IncludeUsage ends the stream with a usage chunk (no choices), as
	// stream_options.include_usage asks.
	IncludeUsage bool
}

// Stream translates a Messages stream into chat.completion.chunk data,
// fed one event at a time (Event): message_start as the first chunk
// (the assistant's role), text_delta as content, thinking_delta as
// reasoning_content, a tool_use block as a tool call (its id and name,
// then input_json_delta as arguments), message_delta as the chunk with
// the finish_reason, message_stop as the usage chunk when asked (and
// the finish_reason stop when no message_delta had one); ping
// and signature or citation deltas add nothing. An error event is an
// *Error. The events must come in the API's order, as Anthropic sends
// them, or the stream is ErrMalformed (cut, never Done): message_start
// first and once; each block started, then stopped; one message_delta
// after every block stopped, then only message_stop; a tool_use block's
// whole input a JSON object; an event's name its data's type. Not safe
// for concurrent use.
type Stream struct {
	o       StreamOptions
	id      string
	model   string
	started bool
	ended   bool // message_delta was translated: only message_stop may follow
	done    bool
	blocks  map[int]*openBlock // by the event's index
	tools   int                // the next tool call's index
	finish  string
	usage   wire.Usage
}

// openBlock is a content block of the stream.
type openBlock struct {
	typ    string
	tool   int             // a tool_use block's tool call index
	input  strings.Builder // a tool_use block's input so far
	closed bool
}

// NewStream starts the translation of one stream.
func NewStream(o StreamOptions) *Stream {
	return &Stream{o: o, blocks: map[int]*openBlock{}}
}

// Done says whether message_stop was translated: the stream ended
// whole.
func (s *Stream) Done() bool { return s.done }

// FinishReason is the stream's finish_reason so far ("" before
// message_delta).
func (s *Stream) FinishReason() string { return s.finish }

// Tokens are the stream's counts so far, as Reply's Tokens.
func (s *Stream) Tokens() routing.Tokens { return TokensOf(s.usage) }

// eventIn is what Event reads of an event's data.
type eventIn struct {
	Type         string  `json:"type"`
	Index        *int    `json:"index"`
	ContentBlock blockIn `json:"content_block"`
	Message      struct {
		ID    string `json:"id"`
		Model string `json:"model"`
	} `json:"message"`
	Delta struct {
		Type        string  `json:"type"`
		Text        string  `json:"text"`
		PartialJSON string  `json:"partial_json"`
		Thinking    string  `json:"thinking"`
		StopReason  *string `json:"stop_reason"`
	} `json:"delta"`
}

// Event translates one event (its name, or "" to read it from the
// data's type, and its data) into the chunks it adds. Its errors are
// ErrMalformed (an event out of order or unreadable) or, for an error
// event, an *Error.
func (s *Stream) Event(name string, data []byte) ([][]byte, error) {
	var ev eventIn
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("%w: an event that is not JSON: %v", ErrMalformed, err)
	}
	switch {
	case name == "":
		name = ev.Type
	case ev.Type != name:
		return nil, fmt.Errorf("%w: an event named %q whose data's type is %q", ErrMalformed, name, ev.Type)
	}
	switch {
	case name == wire.EventPing:
		return nil, nil
	case name == wire.EventError:
		return nil, streamError(data)
	case s.done:
		return nil, fmt.Errorf("%w: a %s event after message_stop", ErrMalformed, name)
	case !s.started && name != wire.EventMessageStart:
		return nil, fmt.Errorf("%w: the stream starts with %s, not message_start", ErrMalformed, name)
	case s.ended && name != wire.EventMessageStop:
		return nil, fmt.Errorf("%w: a %s event after message_delta (only message_stop may follow it)", ErrMalformed, name)
	}
	switch name {
	case wire.EventMessageStart:
		return s.start(&ev, data)
	case wire.EventContentBlockStart:
		return s.blockStart(&ev)
	case wire.EventContentBlockDelta:
		return s.blockDelta(&ev)
	case wire.EventContentBlockStop:
		return s.blockStop(&ev)
	case wire.EventMessageDelta:
		return s.messageDelta(&ev, data)
	case wire.EventMessageStop:
		return s.stop()
	}
	return nil, nil // an event Anthropic may add later: nothing to translate
}

// messageDelta ends the message: every block closed, the final
// cumulative usage read, the finish_reason chunk (when it has a stop
// reason).
func (s *Stream) messageDelta(ev *eventIn, data []byte) ([][]byte, error) {
	for i, b := range s.blocks {
		if !b.closed {
			return nil, fmt.Errorf("%w: message_delta with content block %d (%s) not stopped", ErrMalformed, i, b.typ)
		}
	}
	if err := s.usage.AddEvent(wire.EventMessageDelta, data); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	s.ended = true
	if ev.Delta.StopReason != nil {
		s.finish = FinishReason(*ev.Delta.StopReason)
	}
	if s.finish == "" {
		return nil, nil
	}
	f := s.finish
	return s.chunks(chunkChoice{FinishReason: &f}), nil
}

// stop is message_stop: the stream whole, after its message_delta (which
// Anthropic always sends, with the final usage: a stream without one is
// cut, its output count message_start's placeholder).
func (s *Stream) stop() ([][]byte, error) {
	if !s.ended {
		return nil, fmt.Errorf("%w: message_stop without message_delta (the final usage)", ErrMalformed)
	}
	s.done = true
	var out [][]byte
	if s.finish == "" { // a message_delta without a stop reason: the turn ended all the same
		s.finish = "stop"
		f := s.finish
		out = s.chunks(chunkChoice{FinishReason: &f})
	}
	if s.o.IncludeUsage {
		out = append(out, s.encode(chunk{Choices: []chunkChoice{}, Usage: usageOf(s.usage)})...)
	}
	return out, nil
}

func (s *Stream) start(ev *eventIn, data []byte) ([][]byte, error) {
	if s.started {
		return nil, fmt.Errorf("%w: a second message_start", ErrMalformed)
	}
	if err := s.usage.AddEvent(wire.EventMessageStart, data); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	s.started, s.id, s.model = true, ev.Message.ID, ev.Message.Model
	empty := ""
	return s.chunks(chunkChoice{Delta: delta{Role: "assistant", Content: &empty}}), nil
}

func (s *Stream) blockStart(ev *eventIn) ([][]byte, error) {
	if ev.Index == nil || s.blocks[*ev.Index] != nil {
		return nil, fmt.Errorf("%w: a content_block_start without an index or with one already used", ErrMalformed)
	}
	b := &openBlock{typ: ev.ContentBlock.Type}
	s.blocks[*ev.Index] = b
	cb := ev.ContentBlock
	switch b.typ {
	case "text":
		return s.content(cb.Text), nil
	case "thinking":
		return s.reasoning(cb.Thinking), nil
	case "tool_use":
		if cb.ID == "" || cb.Name == "" {
			return nil, fmt.Errorf("%w: a tool_use block without id or name", ErrMalformed)
		}
		b.tool = s.tools
		s.tools++
		i := b.tool
		return s.chunks(chunkChoice{Delta: delta{ToolCalls: []toolCall{{Index: &i, ID: cb.ID, Type: "function",
			Function: functionCall{Name: cb.Name}}}}}), nil
	}
	return nil, nil // redacted thinking, server tools' blocks: dropped
}

func (s *Stream) blockDelta(ev *eventIn) ([][]byte, error) {
	b, err := s.block(ev)
	if err != nil {
		return nil, err
	}
	switch {
	case ev.Delta.Type == "text_delta" && b.typ == "text":
		return s.content(ev.Delta.Text), nil
	case ev.Delta.Type == "thinking_delta" && b.typ == "thinking":
		return s.reasoning(ev.Delta.Thinking), nil
	case ev.Delta.Type == "input_json_delta" && b.typ == "tool_use":
		if ev.Delta.PartialJSON == "" {
			return nil, nil
		}
		b.input.WriteString(ev.Delta.PartialJSON)
		return s.arguments(b.tool, ev.Delta.PartialJSON), nil
	case ev.Delta.Type == "text_delta", ev.Delta.Type == "thinking_delta", ev.Delta.Type == "input_json_delta":
		return nil, fmt.Errorf("%w: a %s in a %s block", ErrMalformed, ev.Delta.Type, b.typ)
	}
	return nil, nil // signature, citations: nothing for chat
}

func (s *Stream) blockStop(ev *eventIn) ([][]byte, error) {
	b, err := s.block(ev)
	if err != nil {
		return nil, err
	}
	b.closed = true
	if b.typ != "tool_use" {
		return nil, nil
	}
	if b.input.Len() == 0 {
		return s.arguments(b.tool, "{}"), nil // a call without input has {} as its arguments
	}
	// The arguments went out as they came; a whole input that is not a
	// JSON object fails the stream, as Reply refuses it.
	in := bytes.TrimSpace([]byte(b.input.String()))
	if len(in) == 0 || in[0] != '{' || !json.Valid(in) {
		return nil, fmt.Errorf("%w: content block %d: a tool_use input that is not a JSON object", ErrMalformed, *ev.Index)
	}
	b.input.Reset()
	return nil, nil
}

// block is the open block an event's index names.
func (s *Stream) block(ev *eventIn) (*openBlock, error) {
	if ev.Index == nil || s.blocks[*ev.Index] == nil || s.blocks[*ev.Index].closed {
		return nil, fmt.Errorf("%w: a %s for a block that is not open", ErrMalformed, ev.Type)
	}
	return s.blocks[*ev.Index], nil
}

func (s *Stream) content(t string) [][]byte {
	if t == "" {
		return nil
	}
	return s.chunks(chunkChoice{Delta: delta{Content: &t}})
}

func (s *Stream) reasoning(t string) [][]byte {
	if t == "" {
		return nil
	}
	return s.chunks(chunkChoice{Delta: delta{ReasoningContent: &t}})
}

func (s *Stream) arguments(tool int, args string) [][]byte {
	return s.chunks(chunkChoice{Delta: delta{ToolCalls: []toolCall{{Index: &tool, Function: functionCall{Arguments: args}}}}})
}

func (s *Stream) chunks(c chunkChoice) [][]byte {
	return s.encode(chunk{Choices: []chunkChoice{c}})
}

func (s *Stream) encode(c chunk) [][]byte {
	c.ID, c.Object, c.Created, c.Model = s.id, "chat.completion.chunk", s.o.Created, s.model
	b, _ := chat.Marshal(&c, chat.EscapeHTML)
	return [][]byte{b}
}
