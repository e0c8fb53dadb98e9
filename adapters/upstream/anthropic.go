package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/arr-dev/arr/domain/anthropic"
	"github.com/arr-dev/arr/domain/routing"
)

// API names an upstream's wire format, chosen per catalog model.
type API string

// The APIs Do speaks.
const (
	// APIOpenAI is OpenAI's chat completions, POST {base_url}/chat/completions
	// with Authorization: Bearer (the default).
	APIOpenAI API = "openai"
	// APIAnthropic is Anthropic's Messages, POST {base_url}/messages with
	// x-api-key, anthropic-version and the client's anthropic-beta.
	APIAnthropic API = "anthropic"
	// APIGemini is Google's Gemini API, POST
	// {base_url}/models/{upstream_model}:generateContent (streams:
	// :streamGenerateContent?alt=sse) with x-goog-api-key (gemini.go).
	APIGemini API = "gemini"
	// APIVertex is Google Cloud's Vertex AI, with an OAuth2 access token
	// of the service account credentials_env names: Gemini at POST
	// {base_url}/projects/{project}/locations/{location}/publishers/google/models/{upstream_model}:generateContent
	// (gemini.go), and for a model of vendor "anthropic" Claude at
	// …/publishers/anthropic/models/{upstream_model}:rawPredict
	// (:streamRawPredict), the body a Messages request (vertex.go).
	APIVertex API = "vertex"
	// APIBedrock is AWS Bedrock's Converse API (bedrock.go): the
	// Request's Body is a chat completion request, translated
	// (translate/bedrock) and sent to POST {base_url, or
	// https://bedrock-runtime.{region}.amazonaws.com}/model/
	// {upstream_model}/converse (or /converse-stream), signed with SigV4
	// with credentials from the standard chain; the reply comes back as a
	// chat completion (Response.Data) or chat chunks (Response.Stream),
	// Bedrock's usage in Response.Usage (or Stream.Usage) with the cache
	// writes chat cannot carry.
	APIBedrock API = "bedrock"
)

// Request is one call of Do.
type Request struct {
	// API is the upstream's wire format ("": APIOpenAI).
	API API
	// Body is the request in that format, its model already set to the
	// upstream's id; it is sent as it is.
	Body []byte
	// Stream asks for a streamed reply (Body must ask for one too).
	Stream bool
	// AnthropicVersion is the client's anthropic-version header, sent on
	// ("": anthropic.DefaultVersion). Anthropic only.
	AnthropicVersion string
	// AnthropicBeta is the client's anthropic-beta values, sent on.
	// Anthropic only.
	AnthropicBeta []string
}

// ErrUnsupportedAPI is the Err of a Request in an API Do does not speak
// (retryable: another candidate may speak its own).
var ErrUnsupportedAPI = errors.New("unsupported upstream API")

// chatEndpoint is where r goes, or the Error that keeps it from going out
// at all (no breaker, no span): an API Do does not speak, or Anthropic
// headers that cannot be sent (control characters, too long), refused as
// the API would refuse them, not blamed on the upstream.
func chatEndpoint(m routing.Model, r Request) (endpoint, error) {
	api := r.API
	if api == APIVertex && m.Vendor == "anthropic" {
		api = APIAnthropic
	}
	switch api {
	case "", APIOpenAI:
		return endpoint{path: "/chat/completions", maxReply: maxChatReply, api: APIOpenAI}, nil
	case APIAzureOpenAI:
		return azureEndpoint(m), nil
	case APIAnthropic:
		for _, h := range [...]struct{ name, v string }{{"anthropic-version", r.AnthropicVersion}, {"anthropic-beta", strings.Join(r.AnthropicBeta, ",")}} {
			if !headerValue(h.v) {
				msg := h.name + ": not a valid header value"
				return endpoint{}, &Error{Model: m.ID, Status: http.StatusBadRequest,
					Body: anthropic.NewError(anthropic.ErrorInvalidRequest, msg), Type: anthropic.ErrorInvalidRequest, Err: errors.New(msg)}
			}
		}
		// The body says whether the upstream streams: a Request that says
		// otherwise would read a stream as a broken reply (or a reply as
		// a cut stream) and blame the upstream for the client's body.
		if stream, err := streamField(r.Body); err != nil || stream != r.Stream {
			msg := fmt.Sprintf("the body's stream field is not %v", r.Stream)
			if err != nil {
				msg = "the body is not a JSON object: " + err.Error()
			}
			return endpoint{}, &Error{Model: m.ID, Status: http.StatusBadRequest,
				Body: anthropic.NewError(anthropic.ErrorInvalidRequest, msg), Type: anthropic.ErrorInvalidRequest, Err: errors.New(msg)}
		}
		if r.API == APIVertex {
			return vertexAnthropicEndpoint(m, r)
		}
		return endpoint{path: "/messages", maxReply: maxChatReply, api: APIAnthropic}, nil
	case APIGemini, APIVertex:
		return geminiEndpoint(m, r)
	case APIBedrock:
		return bedrockEndpoint(m, r)
	}
	return endpoint{}, &Error{Model: m.ID, Retryable: true, Err: fmt.Errorf("%w %q", ErrUnsupportedAPI, r.API)}
}

// streamField is the "stream" field of an Anthropic request body, read as
// the API reads it (the last of duplicate keys wins, as in encoding/json).
func streamField(body []byte) (bool, error) {
	var b struct {
		Stream bool `json:"stream"`
	}
	err := json.Unmarshal(body, &b)
	return b.Stream, err
}

// isEventStream: the reply's Content-Type is text/event-stream.
func isEventStream(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// anthropicStart reads an Anthropic stream's first event before the call
// counts as answered, so an upstream that accepts a stream and fails it at
// once (an overloaded_error event, a stream that does not start with
// message_start) is a failed call of the model's breaker, and another
// upstream is tried, as for a non-200 status. An invalid_request_error
// event is the request's own (passed on, not retried). Pings before it
// (keep-alives that carry nothing) are read and dropped, up to
// maxLeadingPings: a ping is no answer.
func anthropicStart(m routing.Model, out *Response) (*Response, error) {
	out.Stream.anthropicEvents()
	err := out.Stream.Peek()
	for i := 0; err == nil && i < maxLeadingPings && out.Stream.peeked.Name == anthropic.EventPing; i++ {
		out.Stream.hasPeek = false // dropped
		err = out.Stream.Peek()
	}
	if err == nil {
		return out, nil
	}
	out.Stream.Close()
	ue := &Error{Model: m.ID, Status: out.Status, Retryable: true, Err: err}
	var ee *EventError
	if errors.As(err, &ee) {
		ue.Body, ue.Type = ee.Body, ee.Type
		if ee.Type == anthropic.ErrorInvalidRequest {
			ue.Status, ue.Retryable = http.StatusBadRequest, false
		}
	}
	return nil, ue
}

// maxLeadingPings bounds the pings read before an Anthropic stream's
// first event (each within the stream's idle timeout).
const maxLeadingPings = 64

// headerValue: v is printable ASCII of at most 4 KiB.
func headerValue(v string) bool {
	if len(v) > 4<<10 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// ErrTooLarge: a stream longer than its endpoint allows (an Anthropic
// stream: the longest reply read, 32 MiB, as a non-streamed one; an
// OpenAI chat stream: 8 times that), or one event longer than the longest
// reply read; it is cut there (ErrCut too).
var ErrTooLarge = errors.New("the stream is over the longest reply read")

// EventError is an Anthropic stream's error event or a Bedrock stream's
// exception: the upstream failed mid-stream. Errors of NextEvent that
// are one are ErrCut too.
type EventError struct {
	// Body is the event's data: an anthropic.ErrorBody, or a Bedrock
	// exception's payload ({"message"}).
	Body []byte
	// Type is its error.type ("overloaded_error") or the exception's
	// name ("ThrottlingException"), "" when unreadable.
	Type string
	// exception is a Bedrock exception's :exception-type.
	exception string
}

func (e *EventError) Error() string {
	if e.Type == "" {
		return "the upstream sent an error event"
	}
	return "the upstream sent an error event (" + e.Type + ")"
}

// anthropicState is what an Anthropic stream keeps besides the SSE
// reader's.
type anthropicState struct {
	usage anthropic.Usage
	// started: message_start came (first, once).
	started bool
	// err ends the stream: every later call returns it.
	err error
}

// anthropicEvents makes s read Anthropic's events. It is called before
// the first read.
func (s *Stream) anthropicEvents() {
	s.anth = &anthropicState{}
}

// Usage is an Anthropic stream's usage so far: message_start's input and
// cache counts, message_delta's (cumulative) output count. Zero for other
// streams.
func (s *Stream) Usage() anthropic.Usage {
	if s.frames != nil {
		return s.frames.usage()
	}
	if s.anth == nil {
		return anthropic.Usage{}
	}
	return s.anth.usage
}

// anthropicEvent takes ev in: message_stop ends the stream, an error
// event fails it, message_start and message_delta carry the usage.
func (s *Stream) anthropicEvent(ev Event) error {
	var err error
	switch ev.Name {
	case anthropic.EventMessageStop:
		if !s.anth.started {
			return fmt.Errorf("%w: %w: message_stop before message_start", ErrCut, errEventOrder)
		}
		s.done = true
		return nil
	case anthropic.EventError:
		e := &EventError{Body: append([]byte(nil), ev.Data...)}
		if body, ok := anthropic.ParseError(ev.Data); ok {
			e.Type = body.Error.Type
		}
		err = fmt.Errorf("%w: %w", ErrCut, e)
	default:
		if err := s.anthropicOrder(ev.Name); err != nil {
			return fmt.Errorf("%w: %w", ErrCut, err)
		}
		if uerr := s.anth.usage.AddEvent(ev.Name, ev.Data); uerr != nil {
			err = fmt.Errorf("%w: %w", ErrCut, uerr)
		}
	}
	return err
}

// errEventOrder: an Anthropic stream whose events are not in the API's
// order: message_start first (pings aside) and once, so its input usage
// is counted before anything is delivered and never replaced.
var errEventOrder = errors.New("anthropic: a stream's events out of order")

// anthropicOrder checks event name against the stream so far.
func (s *Stream) anthropicOrder(name string) error {
	switch {
	case name == anthropic.EventPing:
		return nil
	case name == anthropic.EventMessageStart && s.anth.started:
		return fmt.Errorf("%w: a second message_start", errEventOrder)
	case name == anthropic.EventMessageStart:
		s.anth.started = true
		return nil
	case !s.anth.started:
		return fmt.Errorf("%w: %s before message_start", errEventOrder, name)
	}
	return nil
}

// capped reads at most left bytes of r, then fails with ErrTooLarge.
type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
