package complete

import (
	"errors"
	"fmt"

	"github.com/arr-dev/arr/adapters/upstream"
	tanthropic "github.com/arr-dev/arr/adapters/upstream/translate/anthropic"
	"github.com/arr-dev/arr/adapters/upstream/translate/bedrock"
	"github.com/arr-dev/arr/adapters/upstream/translate/gemini"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
)

// The chat ingress and every upstream API, in one place: a chat request
// (a chat completion, or a Responses or Messages request translated to
// one) routed to a model of any API is sent in that API's own format and
// read back as chat, so everything after dispatch (usage, the response
// cache, the audit entry, the relay of chunks) sees chat completions.
//
//   - openai, azure_openai: the chat body as it is (UpstreamBody).
//   - anthropic, and vertex with vendor anthropic (Claude on Vertex AI):
//     translate/anthropic's Request, Reply and Stream; the upstream's
//     usage (Response.Usage, Stream.Usage) counts cache reads and writes.
//   - gemini, and vertex's other models: translate/gemini's Request,
//     CompletionBody and Stream; cachedContentTokenCount as cache reads.
//   - bedrock: the chat body, which upstream.Client.Do translates itself
//     (translate/bedrock), its usage with cacheRead and cacheWrite.
//
// An upstream's refusal of the request itself keeps its status and
// reaches the client in OpenAI's error shape (chatRefusal); it is no
// failure of the upstream, so the breaker never counts it (upstream.Do).
//
// It lives here, beside the pass-through (native.go), because this is
// where a candidate's call is chosen: upstream.Client.Do keeps speaking
// each API's own body, which the pass-through needs as it came.

// wireKind is how a chat request reaches a model: the upstream format the
// translation speaks.
type wireKind int

const (
	wireChat     wireKind = iota // OpenAI's chat completions (and Bedrock: Do translates)
	wireMessages                 // Anthropic's Messages
	wireGemini                   // Google's generateContent
)

func wireOf(m routing.Model) wireKind {
	switch m.API {
	case routing.APIAnthropic:
		return wireMessages
	case routing.APIVertex:
		if m.Vendor == "anthropic" {
			return wireMessages
		}
		return wireGemini
	case routing.APIGemini:
		return wireGemini
	}
	return wireChat
}

// countsCacheWrites: m's upstream reports usage in Anthropic's terms
// (upstream.Response.Usage, Stream.Usage), cache writes included.
func countsCacheWrites(m routing.Model) bool {
	return wireOf(m) == wireMessages || m.API == routing.APIBedrock
}

// chatCall is the upstream call of the chat request to candidate c: the
// chat body (UpstreamBody) translated to c's API. A translation refusal
// (what c's API cannot be told) is a *domain.Error.
func (r *Request) chatCall(c routing.Candidate) (upstream.Request, error) {
	body, err := r.UpstreamBody(c)
	if err != nil {
		return upstream.Request{}, err
	}
	out := upstream.Request{API: upstream.API(c.Model.API), Body: body, Stream: r.Stream}
	switch wireOf(c.Model) {
	case wireMessages:
		t, err := tanthropic.Request(body, tanthropic.Options{MaxTokens: c.MaxTokens})
		if err != nil {
			return upstream.Request{}, err
		}
		out.Body = t.Body
	case wireGemini:
		cr, err := bedrock.ReadChat(body) // OpenAI's reading of a chat body, not Bedrock's
		if err != nil {
			return upstream.Request{}, err
		}
		if out.Body, err = gemini.Request(&cr); err != nil {
			return upstream.Request{}, err
		}
	case wireChat:
		if c.Model.API == routing.APIBedrock {
			return out, bedrockRefusal(body)
		}
	}
	return out, nil
}

// bedrockRefusal is what Converse cannot be told of the chat body (Do
// translates it again, and would refuse it as its 400): a *domain.Error,
// so that the next candidate, of another API, may take the request.
func bedrockRefusal(body []byte) error {
	cr, err := bedrock.ReadChat(body)
	if err == nil {
		_, _, err = bedrock.FromChat(&cr, bedrock.Options{CachePoints: cr.PromptCacheKey != nil})
	}
	var de *domain.Error
	switch {
	case err == nil || errors.As(err, &de):
		return err
	case errors.Is(err, bedrock.ErrInvalid):
		return domain.Invalid("invalid_request", "", "%v", err)
	}
	return nil // not the request's fault: Do tells
}

// chatReply turns a non-streamed reply of m's API into a chat completion
// in place (resp.Data); an unreadable reply is the upstream's fault.
func chatReply(m routing.Model, resp *upstream.Response, created int64) error {
	var err error
	switch wireOf(m) {
	case wireMessages:
		var cr tanthropic.ChatReply
		if cr, err = tanthropic.Reply(resp.Data, created); err == nil {
			resp.Data = cr.Body
		}
	case wireGemini:
		var b []byte
		if b, err = gemini.CompletionBody(resp.Data, m.UpstreamModel, created); err == nil {
			resp.Data = b
		}
	}
	if err != nil {
		return &UpstreamFailure{Attempts: []string{fmt.Sprintf("%s: the reply cannot be read as a chat completion: %v", m.ID, err)}}
	}
	return nil
}

// chunker turns a stream's events of one API into chat chunks (nil: the
// stream is chat chunks already).
type chunker struct {
	event func(name string, data []byte) ([][]byte, error)
	queue [][]byte
}

func newChunker(m routing.Model, created int64) *chunker {
	switch wireOf(m) {
	case wireMessages:
		st := tanthropic.NewStream(tanthropic.StreamOptions{Created: created, IncludeUsage: true})
		return &chunker{event: st.Event}
	case wireGemini:
		st := gemini.NewStream(m.UpstreamModel, created)
		return &chunker{event: func(_ string, data []byte) ([][]byte, error) { return st.Event(data) }}
	}
	return nil
}

// nextChunk is the data of the stream's next chat chunk: the upstream's
// own, or its events translated.
func (s *Stream) nextChunk() ([]byte, error) {
	if s.tr == nil {
		return s.resp.Stream.Next()
	}
	for len(s.tr.queue) == 0 {
		ev, err := s.resp.Stream.NextEvent()
		if err != nil {
			return nil, err
		}
		chunks, err := s.tr.event(ev.Name, ev.Data)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", upstream.ErrCut, err)
		}
		s.tr.queue = chunks
	}
	data := s.tr.queue[0]
	s.tr.queue = s.tr.queue[1:]
	return data, nil
}

// relayedUsage is a relayed stream's usage: the upstream's once it
// reported it; before that (a stream cut short), for an API whose usage
// counts as it goes (Anthropic's message_start), its prompt as the
// upstream counted it, cache reads and writes included, and the output
// estimated from the text relayed; else both estimated.
func (s *Stream) relayedUsage() Usage {
	if s.hasUp {
		return s.upUsage
	}
	cand := s.dec.Candidates[0]
	est := s.capEstimate(Usage{Prompt: s.req.PromptEstimate(), Completion: int64(s.a.bytes+3) / 4, Estimated: true}, cand)
	if s.native || !countsCacheWrites(cand.Model) {
		return est
	}
	u := usageOfAnthropic(s.resp.Stream.Usage())
	if u.Prompt == 0 {
		return est
	}
	if est.Completion > u.Completion {
		u.Completion, u.Estimated = est.Completion, true
		u = s.capEstimate(u, cand)
	}
	return u
}

// chatRefusal is an upstream's refusal of the request as the chat client
// is to see it: the status kept (Anthropic's 529 as 503), the body in
// OpenAI's error shape.
func chatRefusal(m routing.Model, ue *upstream.Error) *Refused {
	status, body := ue.Status, ue.Body
	switch wireOf(m) {
	case wireMessages:
		e := tanthropic.TranslateError(ue.Status, ue.Body)
		status, body = e.Status, e.Body
	case wireGemini:
		body = gemini.ChatError(ue.Status, ue.Body)
	}
	return &Refused{Status: status, Body: body, Err: ue, API: routing.APIOpenAI}
}

// translationRefusal: err is a candidate's translation refusing the
// request (what its API cannot be told), so another candidate, of
// another API, may still take it.
func translationRefusal(err error) bool {
	return errors.Is(err, domain.ErrInvalid)
}
