package messages

import (
	"encoding/json"
	"fmt"

	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/readapi/gateway/dialect"
)

// Event is one server-sent event of a streamed Message: its name (also
// the data's "type") and its JSON data.
type Event = dialect.Event

// Stream turns the chunks of a streamed chat completion into Anthropic's
// events: message_start and ping before the first block; for text a text
// block (content_block_start, content_block_delta with text_delta…,
// content_block_stop); for each tool call a tool_use block whose input
// arrives as input_json_delta; and at Finish message_delta (stop_reason,
// usage, routing) and message_stop. Fail ends it with an error event. Not
// safe for concurrent use.
type Stream struct {
	id       string
	model    string
	started  bool
	ended    bool
	next     int    // index of the next content block
	open     string // "", "text" or "tool_use": the open block's type
	tool     int    // chat index of the open tool call
	seenTool map[int]bool
	finish   string
	usage    *chat.Usage
	routing  json.RawMessage
}

// NewStream starts the translation of one stream; model is what
// message_start names until the upstream's first chunk says.
func NewStream(id, model string) *Stream {
	return &Stream{id: id, model: model, seenTool: map[int]bool{}}
}

func event(typ string, fields map[string]any) Event {
	fields["type"] = typ
	b, _ := marshal(fields)
	return Event{Type: typ, Data: b}
}

// Chunk translates one chat chunk (the gateway's last chunk, with usage
// and routing, included).
func (s *Stream) Chunk(data []byte) ([]Event, error) {
	var c chat.Chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("reading a chunk: %w", err)
	}
	if s.model == "" || (!s.started && c.Model != "") {
		s.model = c.Model
	}
	var out []Event
	if !s.started {
		out = s.start()
	}
	if c.Usage != nil {
		s.usage = c.Usage
	}
	if len(c.Routing) > 0 && string(c.Routing) != "null" {
		s.routing = c.Routing
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		d := ch.Delta
		if d.Content != nil && *d.Content != "" {
			out = append(out, s.text(*d.Content)...)
		}
		if d.Refusal != nil && *d.Refusal != "" {
			out = append(out, s.text(*d.Refusal)...)
		}
		for _, tc := range d.ToolCalls {
			evs, err := s.toolDelta(tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments)
			if err != nil {
				return nil, err
			}
			out = append(out, evs...)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finish = *ch.FinishReason
		}
	}
	return out, nil
}

func (s *Stream) start() []Event {
	s.started = true
	msg := message{ID: s.id, Type: "message", Role: "assistant", Model: s.model, Content: []any{}, Usage: usage{ServiceTier: "standard"}}
	return []Event{event("message_start", map[string]any{"message": msg}), event("ping", map[string]any{})}
}

func (s *Stream) text(t string) []Event {
	var out []Event
	if s.open != "text" {
		out = append(out, s.stop()...)
		out = append(out, event("content_block_start", map[string]any{"index": s.next, "content_block": textBlock{Type: "text", Text: ""}}))
		s.open = "text"
	}
	return append(out, event("content_block_delta", map[string]any{"index": s.next, "delta": map[string]string{"type": "text_delta", "text": t}}))
}

func (s *Stream) toolDelta(index int, id, name, args string) ([]Event, error) {
	var out []Event
	if s.open != "tool_use" || s.tool != index {
		if s.seenTool[index] {
			return nil, fmt.Errorf("the upstream interleaved the arguments of tool call %d with another call's", index)
		}
		if name == "" {
			return nil, fmt.Errorf("tool call %d starts without a function name", index)
		}
		if id == "" {
			id = fmt.Sprintf("toolu_%s_%d", s.id, index)
		}
		out = append(out, s.stop()...)
		s.seenTool[index], s.open, s.tool = true, "tool_use", index
		out = append(out, event("content_block_start", map[string]any{"index": s.next,
			"content_block": toolUseBlock{Type: "tool_use", ID: id, Name: name, Input: json.RawMessage(`{}`)}}))
	}
	if args != "" {
		out = append(out, event("content_block_delta", map[string]any{"index": s.next, "delta": map[string]string{"type": "input_json_delta", "partial_json": args}}))
	}
	return out, nil
}

// stop closes the open block, if any.
func (s *Stream) stop() []Event {
	if s.open == "" {
		return nil
	}
	e := event("content_block_stop", map[string]any{"index": s.next})
	s.open = ""
	s.next++
	return []Event{e}
}

// Finish ends a completed stream: the open block's content_block_stop,
// message_delta with the stop reason, the usage and the routing object,
// and message_stop.
func (s *Stream) Finish() []Event {
	if s.ended {
		return nil
	}
	var out []Event
	if !s.started {
		out = s.start()
	}
	out = append(out, s.stop()...)
	s.ended = true
	delta := map[string]any{"stop_reason": StopReason(s.finish), "stop_sequence": nil}
	fields := map[string]any{"delta": delta, "usage": usageOf(s.usage)}
	if len(s.routing) > 0 {
		fields["routing"] = s.routing
	}
	return append(out, event("message_delta", fields), event("message_stop", map[string]any{}))
}

// FailEvent is the error event of Anthropic's shape (errType one of
// ErrorType's) carrying arr's code, that ends a stream that failed.
func FailEvent(errType, code, msg string) Event {
	return event("error", map[string]any{"error": map[string]string{"type": errType, "message": msg, "code": code}})
}

// Fail ends a stream that did not complete with an error event of
// Anthropic's shape (errType one of ErrorType's), carrying arr's code.
func (s *Stream) Fail(errType, code, msg string) []Event {
	if s.ended {
		return nil
	}
	s.ended = true
	return []Event{event("error", map[string]any{"error": map[string]string{"type": errType, "message": msg, "code": code}})}
}
