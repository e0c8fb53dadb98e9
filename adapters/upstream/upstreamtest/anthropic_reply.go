package upstreamtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/arr-dev/arr/domain/anthropic"
	"github.com/arr-dev/arr/domain/wait"
)

// anthropicAnswer is a Messages reply: "Hello from <model>: <last user
// text>", a tool_use of the first tool offered (unless the last message
// brings tool results, then they are echoed), cut at max_tokens words.
// A tool_use's id is toolu_test<number of messages>, so each one of a
// conversation is its own (a client resuming one, as `claude --continue`
// does, matches results to uses by id).
type anthropicAnswer struct {
	model  string
	text   string
	tool   string
	toolID string
	input  string
	stop   string
	usage  anthropic.Usage
}

func (s *Server) anthropicAnswer(p sdk.MessageNewParams) anthropicAnswer {
	var lastUser string
	var results []string
	for i, m := range p.Messages {
		if m.OfUser == nil {
			continue
		}
		var b strings.Builder
		for _, c := range m.OfUser.Content {
			switch {
			case c.OfText != nil:
				b.WriteString(c.OfText.Text)
			case c.OfToolResult != nil && i == len(p.Messages)-1:
				for _, rc := range c.OfToolResult.Content {
					if rc.OfText != nil {
						results = append(results, rc.OfText.Text)
					}
				}
			}
		}
		if b.Len() > 0 {
			lastUser = b.String()
		}
	}
	if len(lastUser) > 200 {
		lastUser = lastUser[:200]
	}
	a := anthropicAnswer{model: p.Model, stop: "end_turn", usage: s.cacheStats(p)}
	switch {
	case len(results) > 0:
		a.text = "Tool results: " + strings.Join(results, "; ")
	case len(p.Tools) > 0 && p.Tools[0].OfTool != nil:
		in, _ := json.Marshal(map[string]string{"input": lastUser})
		a.tool, a.input, a.stop = p.Tools[0].OfTool.Name, string(in), "tool_use"
		a.toolID = fmt.Sprintf("toolu_test%d", len(p.Messages))
		a.usage.OutputTokens = 10
		return a
	default:
		a.text = "Hello from " + p.Model + ": " + lastUser
	}
	words := strings.SplitAfter(a.text, " ")
	if int64(len(words)) > p.MaxTokens {
		words = words[:p.MaxTokens]
		a.text, a.stop = strings.Join(words, ""), "max_tokens"
	}
	a.usage.OutputTokens = int64(len(words))
	return a
}

func (a anthropicAnswer) block() map[string]any {
	if a.tool != "" {
		return map[string]any{"type": "tool_use", "id": a.toolID, "name": a.tool, "input": json.RawMessage(a.input)}
	}
	return map[string]any{"type": "text", "text": a.text}
}

// message is the whole reply.
func (a anthropicAnswer) message() map[string]any {
	return map[string]any{
		"id": "msg_test", "type": "message", "role": "assistant", "model": a.model,
		"content": []any{a.block()}, "stop_reason": a.stop, "stop_sequence": nil,
		"usage": a.usage,
	}
}

// anthropicStream sends the reply as Anthropic's events: message_start
// (with the input usage), ping, the block's start, deltas and stop,
// message_delta (stop reason, output tokens), message_stop.
func (s *Server) anthropicStream(w http.ResponseWriter, r *http.Request, a anthropicAnswer, b Behavior, ab AnthropicBehavior) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeAnthropicError(w, 500, "no flusher")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	event := func(name string, data any) {
		d, _ := json.Marshal(data)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, d)
		fl.Flush()
	}
	start := a.message()
	start["content"], start["stop_reason"] = []any{}, nil
	first := a.usage
	first.OutputTokens = 1
	start["usage"] = first
	event(anthropic.EventMessageStart, map[string]any{"type": anthropic.EventMessageStart, "message": start})
	event(anthropic.EventPing, map[string]any{"type": anthropic.EventPing})
	empty := a.block()
	if a.tool != "" {
		empty["input"] = map[string]any{}
	} else {
		empty["text"] = ""
	}
	event(anthropic.EventContentBlockStart, map[string]any{"type": anthropic.EventContentBlockStart, "index": 0, "content_block": empty})
	if ab.HugeDelta > 0 {
		delta(event, a, strings.Repeat("x", ab.HugeDelta))
	}
	if !s.anthropicDeltas(r, a, b, ab, event) {
		return
	}
	event(anthropic.EventContentBlockStop, map[string]any{"type": anthropic.EventContentBlockStop, "index": 0})
	event(anthropic.EventMessageDelta, map[string]any{"type": anthropic.EventMessageDelta,
		"delta": map[string]any{"stop_reason": a.stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": a.usage.OutputTokens}})
	if !ab.NoStop {
		event(anthropic.EventMessageStop, map[string]any{"type": anthropic.EventMessageStop})
	}
}

// anthropicDeltas sends the block's deltas; false: the stream ended (an
// error event, a cut, or the client left).
func (s *Server) anthropicDeltas(r *http.Request, a anthropicAnswer, b Behavior, ab AnthropicBehavior, event func(string, any)) bool {
	parts := strings.SplitAfter(a.text, " ")
	if a.tool != "" {
		half := len(a.input) / 2
		parts = []string{a.input[:half], a.input[half:]}
	}
	for i, part := range parts {
		if b.CutAfter > 0 && i >= b.CutAfter {
			panic(http.ErrAbortHandler) // breaks the connection off mid-stream
		}
		if ab.ErrorAfter > 0 && i >= ab.ErrorAfter {
			event(anthropic.EventError, anthropic.ErrorBody{Type: "error", Error: anthropic.ErrorDetail{Type: anthropic.ErrorOverloaded, Message: "Overloaded"}})
			return false
		}
		if b.ChunkDelay > 0 && !wait.Sleep(r.Context(), b.ChunkDelay) {
			return false
		}
		delta(event, a, part)
	}
	return true
}

// delta sends one content_block_delta of part.
func delta(event func(string, any), a anthropicAnswer, part string) {
	d := map[string]any{"type": "text_delta", "text": part}
	if a.tool != "" {
		d = map[string]any{"type": "input_json_delta", "partial_json": part}
	}
	event(anthropic.EventContentBlockDelta, map[string]any{"type": anthropic.EventContentBlockDelta, "index": 0, "delta": d})
}
