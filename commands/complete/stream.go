package complete

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"encoding/json"

	"go.opentelemetry.io/otel/trace"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/chat"
)

// Stream is a streamed completion: the upstream's chat.completion.chunk
// events relayed one by one, or a cached reply replayed as chunks. The
// completion is recorded in the audit chain when the relay ends (Next
// then returns io.EOF, or the error that kept it from being recorded); a
// replay is recorded before it starts. Not safe for concurrent use.
type Stream struct {
	h   *Handler
	ctx context.Context
	// deadline is when ctx is cut at Config.MaxDuration.
	deadline time.Time
	call

	// relay
	resp     *upstream.Response
	attempts int
	hash     hash.Hash // response_hash: keyed, over each data line and a newline
	a        assembler
	upUsage  Usage
	hasUp    bool // the upstream reported upUsage
	// nat is a pass-through stream's (native.go), when call.native; tr
	// translates another API's events to chat chunks (wire.go), nil when
	// they are chat chunks.
	nat nativeStream
	tr  *chunker

	// ended: the upstream's stream ended, and a chunk of what the output
	// guardrails held went out before the end (guardrail.go).
	ended bool

	// replay
	replay [][]byte

	routing Routing
	usage   Usage
	cut     error
	done    bool
	err     error // io.EOF once ended and recorded
	// span is the completion's span (trace.go), ended once the stream is
	// recorded; nil: none.
	span trace.Span
	// release ends the stream's context (duration.go) once it is closed.
	release func()
}

// StreamCut says the upstream broke a stream off mid-way: what was relayed
// is incomplete.
type StreamCut struct {
	Model string
	Err   error
}

func (e *StreamCut) Error() string {
	if e.Code() != "upstream_stream_cut" {
		return e.Err.Error() + "; the reply above is incomplete"
	}
	return fmt.Sprintf("the upstream %s broke the stream off mid-way (%v); the reply above is incomplete", e.Model, e.Err)
}

// Code is the stream's error code: max_request_duration_exceeded (the
// duration cap), reservation_lost (its reservation could not be kept) or
// upstream_stream_cut (the upstream broke off, or the client left).
func (e *StreamCut) Code() string {
	var d *DurationExceeded
	var g *GuardrailStop
	switch {
	case errors.As(e.Err, &g):
		return g.Code()
	case errors.As(e.Err, &d):
		return "max_request_duration_exceeded"
	case errors.Is(e.Err, ErrReservationLost):
		return "reservation_lost"
	}
	return "upstream_stream_cut"
}

func (e *StreamCut) Unwrap() error { return e.Err }

// StreamEnd is how a stream ended, for its closing chunk: the id, created
// time and model the chunks carried, the usage, the routing object (with
// the audit hash) and, if the upstream broke off, the cut.
type StreamEnd struct {
	ID      string
	Created int64
	Model   string
	Usage   Usage
	Routing Routing
	Cut     *StreamCut
	// Delta and Stop end a pass-through stream (Native): the data of the
	// upstream's last message_delta, held back for the routing object
	// (nil if it sent none), and its message_stop event as it came.
	// UpstreamError is the data of the error event it was cut with, if
	// it sent one.
	Delta, Stop, UpstreamError []byte
}

// Native says whether the stream is the upstream's own events in the
// request's API, passed through (native.go): Next returns each event's
// raw bytes (message_delta and message_stop held back for End); else
// chat completion chunks.
func (s *Stream) Native() bool { return s.native }

// Routing is the stream's routing object. Before the end of a relay it
// has no audit hash (the completion is recorded at the end: send the hash
// after the body); a replay from the cache has it from the start.
func (s *Stream) Routing() Routing { return s.routing }

// Next returns the data of the next chunk to send, valid until the next
// call. After the last chunk it records the completion and returns
// io.EOF (End then tells how the stream ended), or the error that kept
// the completion from being recorded: then it is not in the audit chain
// (or commands.ErrOutcomeUnknown: the chain cannot tell), and the client
// must not be told it succeeded.
func (s *Stream) Next() ([]byte, error) {
	if s.done {
		return nil, s.err
	}
	if s.resp == nil {
		if len(s.replay) == 0 {
			s.done, s.err = true, io.EOF
			return nil, io.EOF
		}
		data := s.replay[0]
		s.replay = s.replay[1:]
		return data, nil
	}
	if s.native {
		return s.nextNative()
	}
	for {
		if s.ended {
			return nil, s.finish(nil)
		}
		data, err := s.nextChunk()
		if errors.Is(err, io.EOF) {
			if held, stop := s.flushHeld(); held != nil || stop != nil {
				s.ended = true // what the output guardrails held goes out first
				if stop != nil {
					return nil, s.finish(stop)
				}
				return held, nil
			}
			return nil, s.finish(nil)
		}
		if err != nil {
			return nil, s.finish(err)
		}
		s.hash.Write(data)
		s.hash.Write([]byte{'\n'})
		var ch chat.ChunkSummary
		if json.Unmarshal(data, &ch) != nil {
			return data, nil
		}
		s.a.add(&ch)
		if ch.Usage != nil {
			s.upUsage, s.hasUp = usageOf(ch.Usage), true
			if countsCacheWrites(s.dec.Candidates[0].Model) {
				s.upUsage = usageOfAnthropic(s.resp.Stream.Usage()) // its cache writes too
			}
			if len(ch.Choices) == 0 {
				continue // the upstream's usage chunk: the closing chunk carries ours
			}
		}
		out, stop := s.guardChunk(data, &ch)
		if stop != nil {
			return nil, s.finish(stop)
		}
		return out, nil
	}
}

// End tells how the stream ended; valid once Next returned io.EOF.
func (s *Stream) End() StreamEnd {
	e := StreamEnd{ID: s.a.id, Created: s.a.created, Model: s.a.model, Usage: s.usage, Routing: s.routing, Delta: s.nat.delta, Stop: s.nat.stop}
	if e.Delta == nil {
		e.Delta = s.nat.last // sent before the end: again, with routing (usage is cumulative)
	}
	var cut *StreamCut
	if errors.As(s.cut, &cut) {
		e.Cut = cut
		e.UpstreamError = upstreamErrorEvent(cut.Err)
	}
	return e
}

// Close releases the upstream's stream and settles the key's
// reservation with what the stream spent, if it has not ended. It may be
// called more than once.
// Deadline is when the request is cut (Config.MaxDuration, on the
// process's monotonic clock): what its writer bounds each write by, so
// that a client that does not read cannot keep it past it.
func (s *Stream) Deadline() time.Time { return s.deadline }

// A relay closed before its end (the client left) is recorded then, as
// outcome canceled, with the best count seen: a pass-through stream's
// upstream is read on for its message_delta (drainNative), else the
// upstream's counts so far or the estimate of what was relayed
// (usage_estimated).
func (s *Stream) Close() {
	if !s.done && s.resp != nil && s.resp.Stream != nil {
		if s.native {
			s.drainNative()
		}
		ctx := s.ctx
		rec, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeRecord)
		s.ctx = rec // recorded though the client left
		_ = s.finish(errClosed)
		s.ctx = ctx
		cancel()
	}
	if s.resp != nil && s.resp.Stream != nil {
		_ = s.resp.Stream.Close()
	}
	s.settle(s.ctx)
	s.endSpan(context.Canceled) // closed before it was recorded
	if s.release != nil {
		s.release()
	}
}

// closeRecord bounds the recording of a stream closed before its end.
const closeRecord = 10 * time.Second

// errClosed: the stream was closed before its end (the client left).
var errClosed = errors.New("the stream was closed before its end")

// relay starts relaying the stream resp of the candidate that answered.
func (s *Stream) relay(resp *upstream.Response, attempts int) {
	cand := s.dec.Candidates[0]
	s.resp, s.attempts, s.hash = resp, attempts, s.h.cfg.HashKey.New()
	if !s.native {
		s.tr = newChunker(cand.Model, s.h.cfg.Clock().Unix())
	}
	s.routing = s.h.routing(&s.call, cand.Model, commands.Recorded{}, Usage{}, 0, false, attempts, cand.Predicted)
}

// finish records the relayed stream (cut is the upstream's error if it
// broke off) and caches a finished one.
func (s *Stream) finish(cut error) error {
	s.done = true
	cand := s.dec.Candidates[0]
	if s.a.id == "" {
		s.a.id, s.a.created, s.a.model = "chatcmpl-arr", s.h.cfg.Clock().Unix(), cand.Model.UpstreamModel
	}
	u := s.relayedUsage()
	outcome := "ok"
	var stop *GuardrailStop
	if errors.As(cut, &stop) {
		outcome = OutcomeRefused
	} else if errors.Is(cut, errClosed) {
		outcome = "canceled"
	} else if cut != nil {
		outcome = "cut"
		if cause := gatewayCut(s.ctx); cause != nil {
			cut = cause // the duration cap, or a reservation that could not be kept
		} else if s.ctx.Err() != nil {
			outcome = "canceled"
		}
	}
	rec, cost, err := s.h.record(s.ctx, &s.call, cand.Model, u, hex.EncodeToString(s.hash.Sum(nil)), false, outcome, s.attempts, s.resp.FirstByte)
	s.settle(s.ctx)
	if err != nil {
		s.h.cfg.Logger.Error("recording a streamed completion failed", "err", err, "request_id", s.md.RequestID)
		s.err = err
		s.endSpan(err)
		return err
	}
	s.usage, s.err = u, io.EOF
	s.routing = s.h.routing(&s.call, cand.Model, rec, u, cost, false, s.attempts, cand.Predicted)
	s.endSpan(nil)
	if cut != nil {
		s.cut = &StreamCut{Model: cand.Model.ID, Err: cut}
		return io.EOF
	}
	if s.cacheOn && !s.native && s.a.choices <= 1 && (s.a.finish == "stop" || s.a.finish == "length") {
		s.h.cache.put(s.key, cached{body: s.a.reply(u), model: cand.Model.ID, tier: cand.Model.Tier, usage: u, stored: s.h.cfg.Clock()})
	}
	return io.EOF
}

// prepareReplay turns a cached reply into the chunks of its stream: the
// role, the content, the tool calls and the finish.
func (s *Stream) prepareReplay(hit cached) error {
	var doc chat.Completion
	if err := json.Unmarshal(hit.body, &doc); err != nil || len(doc.Choices) == 0 {
		return fmt.Errorf("cached reply unreadable: %v", err)
	}
	s.a = assembler{id: doc.ID, created: doc.Created, model: doc.Model}
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": doc.ID, "object": "chat.completion.chunk", "created": doc.Created, "model": doc.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}})
		s.replay = append(s.replay, b)
	}
	ch := doc.Choices[0]
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	if ch.Message.Content != nil && *ch.Message.Content != "" {
		chunk(map[string]any{"content": *ch.Message.Content}, nil)
	}
	for i, t := range ch.Message.ToolCalls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": t.ID, "type": t.Type,
			"function": map[string]any{"name": t.Function.Name, "arguments": t.Function.Arguments}}}}, nil)
	}
	chunk(map[string]any{}, ch.FinishReason)
	return nil
}
