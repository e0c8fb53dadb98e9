package anthropic_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/anthropic"
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/routing"
)

const (
	evStart = `{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":3,"output_tokens":1}}}`
	evText0 = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	evDelta = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`
	evStop0 = `{"type":"content_block_stop","index":0}`
	evMDone = `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}`
	evEnd   = `{"type":"message_stop"}`
)

// feed sends each data (its name read from its type) to s until one
// fails, as a consumer does: the chunks so far and that error.
func feed(t *testing.T, s *anthropic.Stream, data ...string) ([][]byte, error) {
	t.Helper()
	out, _, err := feedTo(s, data...)
	return out, err
}

// feedLast is feed failing the test on an error before the last event:
// for the cases where the last event is the fault.
func feedLast(t *testing.T, s *anthropic.Stream, data ...string) ([][]byte, error) {
	t.Helper()
	out, i, err := feedTo(s, data...)
	if err != nil && i != len(data)-1 {
		t.Fatalf("event %d %s: %v", i, data[i], err)
	}
	return out, err
}

// feedTo feeds s up to the first error: the chunks, the failing event's
// index and its error.
func feedTo(s *anthropic.Stream, data ...string) ([][]byte, int, error) {
	var out [][]byte
	for i, d := range data {
		chunks, err := s.Event("", []byte(d))
		out = append(out, chunks...)
		if err != nil {
			return out, i, err
		}
	}
	return out, len(data), nil
}

// TestStreamWithoutUsage: without include_usage there is no usage chunk,
// and the counts are still kept (Tokens) for arr's own accounting.
func TestStreamWithoutUsage(t *testing.T) {
	s := anthropic.NewStream(anthropic.StreamOptions{Created: 5})
	chunks, err := feed(t, s, evStart, `{"type":"ping"}`, evText0, evDelta, evStop0, evMDone, evEnd)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 3 || !s.Done() || s.FinishReason() != "length" {
		t.Fatalf("%d chunks, done %v, finish %q", len(chunks), s.Done(), s.FinishReason())
	}
	for _, c := range chunks {
		var ch chat.Chunk
		if err := json.Unmarshal(c, &ch); err != nil || ch.Usage != nil || len(ch.Choices) != 1 || ch.Created != 5 || ch.ID != "msg_1" {
			t.Errorf("chunk %s (%v)", c, err)
		}
	}
	if want := (routing.Tokens{Prompt: 3, Completion: 9}); s.Tokens() != want {
		t.Errorf("Tokens %+v", s.Tokens())
	}
}

// TestStreamMalformed: events out of order or unreadable are
// ErrMalformed, never a panic or a silent success.
func TestStreamMalformed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []string
	}{
		{"not JSON", []string{`{`}},
		{"no message_start", []string{evText0}},
		{"second message_start", []string{evStart, evStart}},
		{"message_start without usage", []string{`{"type":"message_start","message":{"id":"x"}}`}},
		{"delta of no block", []string{evStart, evDelta}},
		{"delta after its block stopped", []string{evStart, evText0, evStop0, evDelta}},
		{"block index used twice", []string{evStart, evText0, evText0}},
		{"block without index", []string{evStart, `{"type":"content_block_start","content_block":{"type":"text"}}`}},
		{"tool_use without a name", []string{evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t"}}`}},
		{"input_json_delta in a text block", []string{evStart, evText0, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}`}},
		{"message_delta without usage", []string{evStart, `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`}},
		{"event after message_stop", []string{evStart, evMDone, evEnd, evDelta}},
		{"message_stop without message_delta", []string{evStart, evText0, evDelta, evStop0, evEnd}},
		{"message_delta with a block open", []string{evStart, evText0, evDelta, evMDone}},
		{"content after message_delta", []string{evStart, evMDone, evText0}},
		{"a second message_delta", []string{evStart, evMDone, evMDone}},
		{"tool input not an object", []string{evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`, evStop0}},
		{"message_start usage without input_tokens", []string{`{"type":"message_start","message":{"id":"x","usage":{"output_tokens":1}}}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := feedLast(t, anthropic.NewStream(anthropic.StreamOptions{}), tc.events...)
			if !errors.Is(err, anthropic.ErrMalformed) {
				t.Errorf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

// TestStreamErrorEvent: an error event is an *Error with the status of
// its kind (overloaded as 503), before or after message_start.
func TestStreamErrorEvent(t *testing.T) {
	for _, tc := range []struct {
		data   string
		status int
		typ    string
	}{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, http.StatusServiceUnavailable, "service_unavailable_error"},
		{`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, http.StatusTooManyRequests, "rate_limit_error"},
		{`{"type":"error","error":{"type":"api_error","message":"oops"}}`, http.StatusInternalServerError, "api_error"},
		{`{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`, http.StatusBadRequest, "invalid_request_error"},
		{`{"type":"error","error":{"type":"brand_new_error","message":"?"}}`, http.StatusInternalServerError, "api_error"},
		{`{"type":"error"}`, http.StatusInternalServerError, "api_error"},
	} {
		for _, before := range [][]string{nil, {evStart, evText0, evDelta}} {
			_, err := feedLast(t, anthropic.NewStream(anthropic.StreamOptions{}), append(before, tc.data)...)
			var ae *anthropic.Error
			if !errors.As(err, &ae) || ae.Status != tc.status || !strings.Contains(string(ae.Body), `"type":"`+tc.typ+`"`) {
				t.Errorf("%s after %d events: %v %+v", tc.data, len(before), err, ae)
			}
		}
	}
}

// TestStreamWithoutStopReason: a stream whose message_delta has no stop
// reason still ends with a finish_reason (stop), before the usage chunk.
func TestStreamWithoutStopReason(t *testing.T) {
	s := anthropic.NewStream(anthropic.StreamOptions{IncludeUsage: true})
	chunks, err := feed(t, s, evStart, `{"type":"message_delta","delta":{"stop_reason":null},"usage":{"output_tokens":2}}`, evEnd)
	if err != nil || len(chunks) != 3 || s.FinishReason() != "stop" ||
		!strings.Contains(string(chunks[1]), `"finish_reason":"stop"`) || !strings.Contains(string(chunks[2]), `"usage"`) {
		t.Fatalf("%s (%v)", bytes.Join(chunks, []byte("\n")), err)
	}
}

// TestStreamEventNames: an event's name must be its data's type; a named
// event that agrees is read as an unnamed one.
func TestStreamEventNames(t *testing.T) {
	s := anthropic.NewStream(anthropic.StreamOptions{})
	if _, err := s.Event("message_start", []byte(evStart)); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []struct{ name, data string }{
		{"content_block_start", evDelta},
		{"message_stop", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{"ping", evEnd},
		{"message_delta", `{"usage":{"output_tokens":1}}`},
	} {
		if _, err := s.Event(ev.name, []byte(ev.data)); !errors.Is(err, anthropic.ErrMalformed) {
			t.Errorf("%s named %s: err = %v", ev.data, ev.name, err)
		}
	}
	if s.Done() {
		t.Fatal("done")
	}
}

// TestStreamToolInput: a tool_use block's input streamed in pieces is
// checked whole at its content_block_stop.
func TestStreamToolInput(t *testing.T) {
	s := anthropic.NewStream(anthropic.StreamOptions{})
	chunks, err := feed(t, s, evStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":" {\"city\": \"Pa"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"ris\"}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`, evEnd)
	if err != nil || !s.Done() || s.FinishReason() != "tool_calls" || len(chunks) != 5 {
		t.Fatalf("%s (%v)", bytes.Join(chunks, []byte("\n")), err)
	}
}
