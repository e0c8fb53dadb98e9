package anthropic_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/anthropic"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/chat"
)

// upstreamBody is a chat body as commands/complete's UpstreamBody writes
// it: the client's fields and arr's (model, the capped max tokens,
// include_usage) in one map, encoded with its keys sorted.
func upstreamBody(t *testing.T, fields map[string]string) []byte {
	t.Helper()
	m := make(map[string]json.RawMessage, len(fields))
	for k, v := range fields {
		m[k] = json.RawMessage(v)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAttackNullAliasErasesMaxTokensCap: a client sends no max_tokens but
// a key encoding/json folds onto it ("max_to\u212Aens", a Kelvin sign
// K), valued null. The gateway's duplicate-key check sees one key, routing
// caps max_tokens for the client's max_cost_usd and UpstreamBody adds
// "max_tokens"; the alias sorts after it and its null, which checkFields
// lets through, unsets the cap: Anthropic gets the model's whole output
// limit and the cost ceiling is not held.
func TestAttackNullAliasErasesMaxTokensCap(t *testing.T) {
	body := upstreamBody(t, map[string]string{
		"model": `"claude-x"`, "messages": `[{"role":"user","content":"hi"}]`,
		"max_tokens":      `100`,  // arr's cap
		"max_to\u212Aens": `null`, // the client's
	})
	tr, err := anthropic.Request(body, anthropic.Options{MaxTokens: 64000})
	if err != nil {
		var e *domain.Error
		if errors.As(err, &e) || errors.Is(err, domain.ErrInvalid) {
			return // refused: held
		}
		t.Fatal(err)
	}
	var m struct {
		MaxTokens int64 `json:"max_tokens"`
	}
	if err := json.Unmarshal(tr.Body, &m); err != nil {
		t.Fatal(err)
	}
	if m.MaxTokens != 100 {
		t.Fatalf("arr's max_tokens cap 100 became %d upstream (body %s)", m.MaxTokens, tr.Body)
	}
}

// TestAttackNullAliasDropsIncludeUsage: the same trick on stream_options
// ("stream_option\u017f", a long s) unsets the include_usage arr forces
// on streams so that real usage is recorded.
func TestAttackNullAliasDropsIncludeUsage(t *testing.T) {
	body := upstreamBody(t, map[string]string{
		"model": `"claude-x"`, "messages": `[{"role":"user","content":"hi"}]`, "stream": `true`,
		"stream_options":      `{"include_usage":true}`, // arr's
		"stream_option\u017f": `null`,                   // the client's
	})
	tr, err := anthropic.Request(body, anthropic.Options{})
	if errors.Is(err, domain.ErrInvalid) {
		return // refused: held
	}
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Stream || !tr.IncludeUsage {
		t.Fatalf("stream %v include_usage %v: the stream ends without the usage chunk arr asked for", tr.Stream, tr.IncludeUsage)
	}
}

// TestAttackStreamStopWithoutMessageDelta: Anthropic always sends the
// final cumulative usage in message_delta before message_stop. A stream
// that skips it is taken as whole (Done) and billed by message_start's
// placeholder output_tokens (1) however much text came.
func TestAttackStreamStopWithoutMessageDelta(t *testing.T) {
	s := anthropic.NewStream(anthropic.StreamOptions{IncludeUsage: true})
	events := []string{evStart, evText0}
	for range 50 {
		events = append(events, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a long answer "}}`)
	}
	events = append(events, evStop0, evEnd)
	_, err := feed(t, s, events...)
	if errors.Is(err, anthropic.ErrMalformed) {
		return // held
	}
	if s.Done() {
		t.Fatalf("a stream without message_delta is Done (err %v) and billed %+v: 50 deltas at 1 output token", err, s.Tokens())
	}
}

// TestAttackStreamStopWithOpenToolBlock: a tool_use block whose
// input_json_delta never closes (no content_block_stop) before
// message_delta and message_stop: the stream claims a whole tool call
// with arguments that are not JSON.
func TestAttackStreamStopWithOpenToolBlock(t *testing.T) {
	s := anthropic.NewStream(anthropic.StreamOptions{})
	_, err := feed(t, s, evStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Par"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`, evEnd)
	if !errors.Is(err, anthropic.ErrMalformed) {
		t.Fatalf("err = %v (done %v, finish %q): a block left open at message_stop passes", err, s.Done(), s.FinishReason())
	}
}

// TestAttackStreamToolArgumentsNotJSON: a closed tool_use block whose
// streamed input is not a JSON object, ending with stop_reason tool_use.
// Reply refuses such an input (ErrMalformed); the stream hands it to the
// client as a successful tool call.
func TestAttackStreamToolArgumentsNotJSON(t *testing.T) {
	s := anthropic.NewStream(anthropic.StreamOptions{})
	_, err := feed(t, s, evStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"[1,"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`, evEnd)
	if !errors.Is(err, anthropic.ErrMalformed) {
		t.Fatalf("err = %v: tool arguments %q delivered with finish_reason %q", err, "[1,", s.FinishReason())
	}
}

// TestAttackStreamContentAfterMessageDelta: content after message_delta
// (which closes the message) is accepted: the chat client gets text after
// the finish_reason chunk, and a second message_delta repeats the
// finish_reason chunk.
func TestAttackStreamContentAfterMessageDelta(t *testing.T) {
	s := anthropic.NewStream(anthropic.StreamOptions{})
	chunks, err := feed(t, s, evStart, evMDone, evText0, evDelta, evStop0,
		`{"type":"message_delta","delta":{"stop_reason":null},"usage":{"output_tokens":12}}`, evEnd)
	if errors.Is(err, anthropic.ErrMalformed) {
		return // held
	}
	finishes, afterFinish := 0, false
	for _, c := range chunks {
		var ch chat.Chunk
		if json.Unmarshal(c, &ch) != nil || len(ch.Choices) == 0 {
			continue
		}
		if ch.Choices[0].FinishReason != nil {
			finishes++
		} else if finishes > 0 && ch.Choices[0].Delta.Content != nil {
			afterFinish = true
		}
	}
	if finishes != 1 || afterFinish {
		t.Fatalf("%d finish_reason chunks, content after finish %v:\n%s", finishes, afterFinish, bytes.Join(chunks, []byte("\n")))
	}
}

// TestAttackReplyUsageWithoutCounts: input_tokens and output_tokens are
// required in a Messages reply's usage; a usage object without them is
// read as zero tokens and the request costs nothing.
func TestAttackReplyUsageWithoutCounts(t *testing.T) {
	for _, usage := range []string{`{}`, `{"output_tokens":500}`, `{"input_tokens":null,"output_tokens":null}`} {
		body := `{"id":"msg_1","type":"message","model":"m","content":[{"type":"text","text":"a long answer"}],"stop_reason":"end_turn","usage":` + usage + `}`
		r, err := anthropic.Reply([]byte(body), 1)
		if !errors.Is(err, anthropic.ErrMalformed) {
			t.Errorf("usage %s: err = %v, billed %+v", usage, err, r.Tokens)
		}
	}
	s := anthropic.NewStream(anthropic.StreamOptions{})
	_, err := s.Event("", []byte(`{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{}}}`))
	if !errors.Is(err, anthropic.ErrMalformed) {
		t.Errorf("message_start with usage {}: err = %v, prompt billed %d", err, s.Tokens().Prompt)
	}
}

// TestAttackEmptyUserContent: Anthropic refuses a message with empty
// content (but an optional final assistant one); a user message of ""
// or [] (or only empty text parts) becomes such a turn instead of an
// ErrInvalid.
func TestAttackEmptyUserContent(t *testing.T) {
	for _, content := range []string{`""`, `[]`, `[{"type":"text","text":""}]`} {
		body := `{"model":"m","messages":[{"role":"user","content":` + content + `}]}`
		tr, err := anthropic.Request([]byte(body), anthropic.Options{})
		if errors.Is(err, domain.ErrInvalid) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(tr.Body), `"content":[]`) {
			t.Errorf("content %s: sent upstream as %s", content, tr.Body)
		}
	}
}

// TestAttackThinkingWithToolHistory: with thinking enabled Anthropic
// refuses a final assistant turn with tool_use that does not start with a
// thinking block, and chat cannot carry thinking signatures back: every
// second turn of a tool loop with reasoning_effort is a 400 upstream.
// Request should leave thinking off for such a conversation (or refuse
// it itself).
func TestAttackThinkingWithToolHistory(t *testing.T) {
	body := `{"model":"m","max_completion_tokens":8000,"reasoning_effort":"medium",
		"tools":[{"type":"function","function":{"name":"get","parameters":{"type":"object"}}}],
		"messages":[{"role":"user","content":"weather?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"get","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"toolu_1","content":"sunny"}]}`
	tr, err := anthropic.Request([]byte(body), anthropic.Options{})
	if errors.Is(err, domain.ErrInvalid) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(tr.Body), `"thinking":{"type":"enabled"`) {
		t.Fatalf("thinking enabled with a final tool_use turn without a thinking block: %s", tr.Body)
	}
}

// TestAttackDuplicateToolCallIDs: two tool calls with one id (or two
// results for it) become duplicate tool_use ids, which Anthropic refuses.
func TestAttackDuplicateToolCallIDs(t *testing.T) {
	body := `{"model":"m","tools":[{"type":"function","function":{"name":"get"}}],"messages":[{"role":"user","content":"x"},
		{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"get","arguments":"{}"}},{"id":"c","type":"function","function":{"name":"get","arguments":"{\"a\":1}"}}]},
		{"role":"tool","tool_call_id":"c","content":"1"},{"role":"tool","tool_call_id":"c","content":"2"}]}`
	tr, err := anthropic.Request([]byte(body), anthropic.Options{})
	if !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("err = %v: sent %s", err, tr.Body)
	}
}

// TestAttackEventNameContradictsData: the SSE event name wins over the
// data's type, so an error event labelled message_stop ends the stream
// as a success.
func TestAttackEventNameContradictsData(t *testing.T) {
	s := anthropic.NewStream(anthropic.StreamOptions{})
	if _, err := feed(t, s, evStart, evText0, evDelta); err != nil {
		t.Fatal(err)
	}
	_, err := s.Event("message_stop", []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	if err == nil && s.Done() {
		t.Fatalf("an error event named message_stop is a whole stream (finish %q)", s.FinishReason())
	}
}

// TestAttackMessageDeltaZeroesInputCounts: message_delta's counts are
// cumulative, so they never fall below message_start's; an upstream that
// sends input_tokens 0 there (as Anthropic-compatible upstreams have,
// envoyproxy/ai-gateway#1631) has its prompt and cache reads billed as
// nothing, because a delta's count replaces the start's whatever it is.
func TestAttackMessageDeltaZeroesInputCounts(t *testing.T) {
	s := anthropic.NewStream(anthropic.StreamOptions{})
	_, err := feed(t, s,
		`{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":1000,"output_tokens":1,"cache_read_input_tokens":5000,"cache_creation_input_tokens":200}}}`,
		evText0, evDelta, evStop0,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":20}}`, evEnd)
	if errors.Is(err, anthropic.ErrMalformed) {
		return // refused: held
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Tokens(); got.Prompt < 6200 || got.CacheWrite < 200 {
		t.Fatalf("Tokens %+v: message_start said 6200 prompt tokens (200 cache writes)", got)
	}
}
