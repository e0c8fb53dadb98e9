package responses

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/readapi/gateway/dialect"
)

// Event is one server-sent event of a streamed Response: its type (the SSE
// event name, also the data's "type") and its JSON data.
type Event = dialect.Event

// Stream turns the chunks of a streamed chat completion into the events of
// a streamed Response: response.created and response.in_progress, for the
// text a message item (output_item.added, content_part.added,
// output_text.delta..., output_text.done, content_part.done,
// output_item.done), for each tool call a function_call item
// (output_item.added, function_call_arguments.delta...,
// function_call_arguments.done, output_item.done), and last
// response.completed (response.incomplete when the token limit or the
// content filter cut the reply, response.failed after Fail) with the whole
// Response, its usage and the gateway's routing. Every event has a
// sequence_number from 0. Not safe for concurrent use.
type Stream struct {
	req       *Request
	id        string
	createdAt int64
	model     string
	seq       int
	started   bool
	ended     bool
	items     []*streamItem // by output_index
	msg       *streamItem   // the open message item
	call      *streamItem   // the open function_call item
	calls     map[int]*streamItem
	finish    string
	usage     *chat.Usage
	routing   json.RawMessage
}

// streamItem is an output item being streamed.
type streamItem struct {
	index  int
	id     string
	call   bool
	closed bool
	status string // set when closed
	// a message: its content parts, the last one open until closed
	parts    []*streamPart
	partOpen bool
	// a function call
	callID, name string
	args         strings.Builder
}

type streamPart struct {
	refusal bool
	text    strings.Builder
}

// NewStream starts the translation of one streamed Response.
func NewStream(req *Request, id string, createdAt int64) *Stream {
	return &Stream{req: req, id: id, createdAt: createdAt, calls: map[int]*streamItem{}}
}

// Chunk translates one chat-completion chunk (the JSON of an SSE data
// line), including the usage chunk and the gateway's last chunk with
// routing, into the events it makes.
func (s *Stream) Chunk(chunk []byte) ([]Event, error) {
	if s.ended {
		return nil, errors.New("the response stream has ended")
	}
	var ch chat.Chunk
	if err := json.Unmarshal(chunk, &ch); err != nil {
		return nil, fmt.Errorf("reading a chat completion chunk: %w", err)
	}
	if s.model == "" {
		s.model = ch.Model
	}
	var ev []Event
	ev = s.start(ev)
	if ch.Usage != nil {
		s.usage = ch.Usage
	}
	if len(ch.Routing) > 0 && string(ch.Routing) != "null" {
		s.routing = ch.Routing
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		d := c.Delta
		if d.Content != nil && *d.Content != "" {
			ev = s.textDelta(ev, false, *d.Content)
		}
		if d.Refusal != nil && *d.Refusal != "" {
			ev = s.textDelta(ev, true, *d.Refusal)
		}
		for _, tc := range d.ToolCalls {
			var err error
			if ev, err = s.callDelta(ev, tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments); err != nil {
				return nil, err
			}
		}
		if c.FinishReason != nil && *c.FinishReason != "" && *c.FinishReason != "error" {
			s.finish = *c.FinishReason
		}
	}
	return ev, nil
}

// Finish ends the stream: it closes the open items and sends
// response.completed, or response.incomplete when the reply was cut by
// the token limit (incomplete_details.reason max_output_tokens) or the
// content filter.
func (s *Stream) Finish() []Event {
	if s.ended {
		return nil
	}
	ev := s.start(nil)
	status, inc := finishStatus(s.finish)
	if len(s.items) == 0 {
		// An empty reply is still a message, as in the non-streamed form.
		ev = s.openMessage(ev, false)
	}
	ev = s.closeAll(ev, itemStatus(status))
	resp := s.response(status)
	resp.IncompleteDetails = inc
	typ := "response.completed"
	if status == "incomplete" {
		typ = "response.incomplete"
	}
	s.ended = true
	return s.emit(ev, typ, map[string]any{"response": resp})
}

// Fail ends the stream with response.failed carrying code and message
// (and the usage and routing, when they came): the upstream broke off, or
// the completion could not be recorded. Open items end incomplete.
func (s *Stream) Fail(code, msg string) []Event {
	if s.ended {
		return nil
	}
	ev := s.start(nil)
	ev = s.closeAll(ev, "incomplete")
	resp := s.response("failed")
	resp.Error = &responseError{Code: code, Message: msg}
	s.ended = true
	return s.emit(ev, "response.failed", map[string]any{"response": resp})
}

func (s *Stream) start(ev []Event) []Event {
	if s.started {
		return ev
	}
	s.started = true
	r := s.req.skeleton(s.id, s.createdAt, s.model)
	ev = s.emit(ev, "response.created", map[string]any{"response": r})
	return s.emit(ev, "response.in_progress", map[string]any{"response": r})
}

// response is the Response with the items so far.
func (s *Stream) response(status string) *response {
	r := s.req.skeleton(s.id, s.createdAt, s.model)
	r.Status = status
	for _, it := range s.items {
		r.Output = append(r.Output, it.value(itemStatus(status)))
	}
	r.Usage = usageOf(s.usage)
	r.Routing = s.routing
	return r
}

// value is the item as output, with the status it closed with (or
// status, while it is open).
func (it *streamItem) value(status string) any {
	if it.closed {
		status = it.status
	}
	if it.call {
		return callItem{ID: it.id, Type: "function_call", Status: status, Arguments: it.args.String(), CallID: it.callID, Name: it.name}
	}
	m := messageItem{ID: it.id, Type: "message", Status: status, Role: "assistant", Content: []any{}}
	for _, p := range it.parts {
		m.Content = append(m.Content, p.value())
	}
	return m
}

func (p *streamPart) value() any {
	if p.refusal {
		return refusalPart{Type: "refusal", Refusal: p.text.String()}
	}
	return newText(p.text.String())
}

// openMessage opens a message item and its first content part (text, or
// a refusal).
func (s *Stream) openMessage(ev []Event, refusal bool) []Event {
	it := &streamItem{index: len(s.items), id: itemID("msg", s.id, len(s.items))}
	s.items = append(s.items, it)
	s.msg = it
	ev = s.emit(ev, "response.output_item.added", map[string]any{"output_index": it.index, "item": it.value("in_progress")})
	return s.openPart(ev, refusal)
}

func (s *Stream) openPart(ev []Event, refusal bool) []Event {
	it := s.msg
	p := &streamPart{refusal: refusal}
	it.parts = append(it.parts, p)
	it.partOpen = true
	return s.emit(ev, "response.content_part.added", map[string]any{
		"item_id": it.id, "output_index": it.index, "content_index": len(it.parts) - 1, "part": p.value()})
}

// textDelta adds text (or refusal text) to the message item, opening it
// (and closing an open function call) or a new content part as needed.
func (s *Stream) textDelta(ev []Event, refusal bool, delta string) []Event {
	if s.call != nil {
		ev = s.closeCall(ev, "completed")
	}
	if s.msg == nil {
		ev = s.openMessage(ev, refusal)
	}
	it := s.msg
	if last := it.parts[len(it.parts)-1]; !it.partOpen || last.refusal != refusal {
		if it.partOpen {
			ev = s.closePart(ev)
		}
		ev = s.openPart(ev, refusal)
	}
	p := it.parts[len(it.parts)-1]
	p.text.WriteString(delta)
	typ := "response.output_text.delta"
	if refusal {
		typ = "response.refusal.delta"
	}
	data := map[string]any{"item_id": it.id, "output_index": it.index, "content_index": len(it.parts) - 1, "delta": delta}
	if !refusal {
		data["logprobs"] = []any{}
	}
	return s.emit(ev, typ, data)
}

func (s *Stream) closePart(ev []Event) []Event {
	it := s.msg
	p := it.parts[len(it.parts)-1]
	it.partOpen = false
	ci := len(it.parts) - 1
	if p.refusal {
		ev = s.emit(ev, "response.refusal.done", map[string]any{"item_id": it.id, "output_index": it.index, "content_index": ci, "refusal": p.text.String()})
	} else {
		ev = s.emit(ev, "response.output_text.done", map[string]any{"item_id": it.id, "output_index": it.index, "content_index": ci, "text": p.text.String(), "logprobs": []any{}})
	}
	return s.emit(ev, "response.content_part.done", map[string]any{"item_id": it.id, "output_index": it.index, "content_index": ci, "part": p.value()})
}

func (s *Stream) closeMessage(ev []Event, status string) []Event {
	if s.msg.partOpen {
		ev = s.closePart(ev)
	}
	it := s.msg
	it.closed, it.status = true, status
	s.msg = nil
	return s.emit(ev, "response.output_item.done", map[string]any{"output_index": it.index, "item": it.value(status)})
}

// callDelta adds to the function call of chat tool-call index: a new index
// closes the open item (tool calls stream one after another) and opens a
// function_call item.
func (s *Stream) callDelta(ev []Event, index int, callID, name, args string) ([]Event, error) {
	it, ok := s.calls[index]
	if ok && it.closed {
		return nil, fmt.Errorf("the upstream sent more of tool call %d after the next one had started", index)
	}
	if !ok {
		if s.msg != nil {
			ev = s.closeMessage(ev, "completed")
		}
		if s.call != nil {
			ev = s.closeCall(ev, "completed")
		}
		it = &streamItem{index: len(s.items), id: itemID("fc", s.id, len(s.items)), call: true, callID: callID, name: name}
		if it.callID == "" {
			it.callID = itemID("call", s.id, index)
		}
		s.items = append(s.items, it)
		s.calls[index], s.call = it, it
		ev = s.emit(ev, "response.output_item.added", map[string]any{"output_index": it.index, "item": it.value("in_progress")})
	} else if name != "" {
		it.name += name
	}
	if args != "" {
		it.args.WriteString(args)
		ev = s.emit(ev, "response.function_call_arguments.delta", map[string]any{"item_id": it.id, "output_index": it.index, "delta": args})
	}
	return ev, nil
}

func (s *Stream) closeCall(ev []Event, status string) []Event {
	it := s.call
	it.closed, it.status = true, status
	s.call = nil
	ev = s.emit(ev, "response.function_call_arguments.done", map[string]any{"item_id": it.id, "output_index": it.index, "name": it.name, "arguments": it.args.String()})
	return s.emit(ev, "response.output_item.done", map[string]any{"output_index": it.index, "item": it.value(status)})
}

func (s *Stream) closeAll(ev []Event, status string) []Event {
	if s.msg != nil {
		ev = s.closeMessage(ev, status)
	}
	if s.call != nil {
		ev = s.closeCall(ev, status)
	}
	return ev
}

// emit appends an event: the fields with type and sequence_number.
func (s *Stream) emit(ev []Event, typ string, fields map[string]any) []Event {
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	data, err := marshal(fields)
	if err != nil {
		// Every value here is made by this package and encodes.
		panic(fmt.Sprintf("responses: encoding %s: %v", typ, err))
	}
	return append(ev, Event{Type: typ, Data: data})
}
