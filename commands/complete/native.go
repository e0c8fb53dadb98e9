package complete

import (
	"encoding/json"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/domain/anthropic"
	"github.com/arr-dev/arr/domain/routing"
)

// Pass-through: a request that arrived in an upstream API's own wire
// format (a Messages request: Anthropic's) carries it as Native. A
// candidate of that API is sent the client's body as it came
// (anthropic.Upstream: only the model, arr's own fields and a capped
// max_tokens changed), and its reply or stream is passed back as the
// upstream sent it, usage read from it and priced as usual (cache reads
// and writes included); a candidate of another API is sent the chat
// translation (UpstreamBody), as before. A pass-through reply is never
// put in, nor served from, the response cache (whose entries are chat
// completions): a request whose first candidate is of its own API skips
// the cache, as X-Arr-Cache: off would.

// Native is a request in an upstream API's own format.
type Native struct {
	// API is the format (routing.APIAnthropic, the one supported).
	API string
	// Body is the client's body; Drop the fields of it that are arr's
	// own (routing hints), left out upstream.
	Body []byte
	Drop []string
	// Untranslated: the chat translation leaves part of Body out (a
	// block, tool or field it cannot express; only API's models can take
	// the request), so the prompt is estimated on Body's bytes too
	// (Request.PromptEstimate).
	Untranslated bool
	// AnthropicVersion and AnthropicBeta are the client's
	// anthropic-version and anthropic-beta headers, sent on.
	AnthropicVersion string
	AnthropicBeta    []string
}

// nativeFor says whether m takes the request as it came.
func (r *Request) nativeFor(m routing.Model) bool {
	return r.Native != nil && r.Native.API == routing.APIAnthropic && m.Wire() == r.Native.API
}

// upstreamRequest is the call of candidate c: the client's own body for
// a candidate of its API (native), else the chat request in c's API
// (wire.go).
func (r *Request) upstreamRequest(c routing.Candidate) (upstream.Request, bool, error) {
	if r.nativeFor(c.Model) {
		body, err := anthropic.Upstream(r.Native.Body, c.Model.UpstreamModel, c.MaxTokens, r.Native.Drop)
		// Claude on Vertex AI is sent the same body (Do moves the model
		// into the path and names Vertex's anthropic_version).
		return upstream.Request{API: upstream.API(c.Model.API), Body: body, Stream: r.Stream,
			AnthropicVersion: r.Native.AnthropicVersion, AnthropicBeta: r.Native.AnthropicBeta}, true, err
	}
	ureq, err := r.chatCall(c)
	return ureq, false, err
}

// usageOfAnthropic is the usage of an Anthropic reply or stream: every
// input token (plain, read from the cache, written to it) in Prompt.
func usageOfAnthropic(a anthropic.Usage) Usage {
	t := routing.Tokens{Prompt: a.PromptTokens(), Completion: a.OutputTokens,
		CacheRead: a.CacheReadInputTokens, CacheWrite: a.CacheCreationInputTokens,
		CacheWrite1h: a.CacheCreation1hInputTokens, WebSearches: a.WebSearchRequests}.Clamped()
	return Usage{Prompt: t.Prompt, Completion: t.Completion, CacheRead: t.CacheRead, CacheWrite: t.CacheWrite,
		CacheWrite1h: t.CacheWrite1h, WebSearches: t.WebSearches}
}

// readNativeReply reads a pass-through reply (the upstream adapter has
// read its usage): never cacheable.
func readNativeReply(resp *upstream.Response) upstreamReply {
	var shape struct {
		Routing json.RawMessage `json:"routing"`
	}
	_ = json.Unmarshal(resp.Data, &shape)
	u := Usage{}
	if resp.Usage != nil {
		u = usageOfAnthropic(*resp.Usage)
	}
	return upstreamReply{usage: u, hasRouting: shape.Routing != nil, native: true}
}

// nativeStream is what a pass-through stream keeps: the message_delta
// held back (its data) until message_stop, when the completion is
// recorded and the delta goes out with the routing object; the raw
// message_stop; an event read while a delta was held, to send next.
type nativeStream struct {
	// delta is the message_delta held; last the latest one seen, sent
	// again with the routing object if it had to go out before the end.
	delta   []byte
	last    []byte
	stop    []byte
	pending []byte
	// final: a message_delta came, whose output count is the reply's;
	// before it the output is estimated from the deltas' text (a stream
	// cut short is billed for what it relayed).
	final bool
}

// deltaText is the length of a content_block_delta's text, thinking or
// tool-input JSON.
func deltaText(data []byte) int {
	var d struct {
		Delta struct {
			Text        string `json:"text"`
			Thinking    string `json:"thinking"`
			PartialJSON string `json:"partial_json"`
		} `json:"delta"`
	}
	_ = json.Unmarshal(data, &d)
	return len(d.Delta.Text) + len(d.Delta.Thinking) + len(d.Delta.PartialJSON)
}

// nativeUsage is a pass-through stream's usage so far: the upstream's,
// its output at least the estimate of the text relayed until the
// message_delta that counts it.
func (s *Stream) nativeUsage() Usage {
	u := usageOfAnthropic(s.resp.Stream.Usage())
	if est := int64(s.a.bytes+3) / 4; !s.nat.final && est > u.Completion {
		u.Completion, u.Estimated = est, true
		u = s.capEstimate(u, s.dec.Candidates[0])
	}
	return u
}

// nextNative returns the next event of a pass-through stream as it came
// (its raw bytes), holding message_delta and message_stop back for End.
func (s *Stream) nextNative() ([]byte, error) {
	if p := s.nat.pending; p != nil {
		s.nat.pending = nil
		return p, nil
	}
	for {
		ev, err := s.resp.Stream.NextEvent()
		if errors.Is(err, io.EOF) {
			return nil, s.finish(nil)
		}
		s.noteNative(ev, err)
		if err != nil {
			return nil, s.finish(err)
		}
		s.hash.Write(ev.Data)
		s.hash.Write([]byte{'\n'})
		switch ev.Name {
		case anthropic.EventMessageDelta:
			held := s.nat.delta
			s.nat.delta = slices.Clone(ev.Data)
			s.nat.last = s.nat.delta
			if held != nil {
				return deltaEvent(held), nil // an earlier delta: usage is cumulative
			}
			continue
		case anthropic.EventMessageStop:
			s.nat.stop = slices.Clone(ev.Raw)
			continue
		}
		if held := s.nat.delta; held != nil && ev.Name != anthropic.EventPing {
			// Another event after message_delta (a ping is sent on while
			// it is held): the delta goes out first, and again at the end.
			s.nat.delta, s.nat.pending = nil, slices.Clone(ev.Raw)
			return deltaEvent(held), nil
		}
		return ev.Raw, nil
	}
}

// noteNative takes in what event ev (read with err) tells of a
// pass-through stream's usage.
func (s *Stream) noteNative(ev upstream.Event, err error) {
	if ev.Name == anthropic.EventMessageStart && err == nil {
		s.hasUp = true
	}
	if err == nil && ev.Name == anthropic.EventContentBlockDelta {
		s.a.bytes += deltaText(ev.Data)
	}
	s.nat.final = s.nat.final || err == nil && ev.Name == anthropic.EventMessageDelta
	s.upUsage = s.nativeUsage()
}

// closeDrain bounds how long a pass-through stream closed before its end
// is read on, unrelayed, for the upstream's count (drainNative).
const closeDrain = time.Second

// drainNative reads what is left of a pass-through stream closed before
// its end (the client left), relaying nothing, for the best count of
// what the upstream bills: its message_delta if it comes within
// closeDrain (the upstream's body is then closed), else the counts so
// far or the estimate of what was relayed.
func (s *Stream) drainNative() {
	stop := time.AfterFunc(closeDrain, s.resp.Stream.Abort)
	defer stop.Stop()
	for {
		ev, err := s.resp.Stream.NextEvent()
		if errors.Is(err, io.EOF) {
			return
		}
		s.noteNative(ev, err)
		if err != nil || s.nat.final {
			return
		}
	}
}

// deltaEvent is a message_delta event with data d.
func deltaEvent(d []byte) []byte {
	out := append([]byte("event: message_delta\ndata: "), d...)
	return append(out, '\n', '\n')
}

// upstreamErrorEvent is the data of the error event an Anthropic upstream
// cut its stream with (nil: none).
func upstreamErrorEvent(err error) []byte {
	var ee *upstream.EventError
	if errors.As(err, &ee) {
		return ee.Body
	}
	return nil
}
