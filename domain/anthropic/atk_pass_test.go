package anthropic_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/anthropic"
)

// TestAtkPassUsageCaseFoldAlias: arr reads an upstream reply's usage with
// encoding/json, which matches member names ignoring case (and folds
// U+212A KELVIN SIGN to k, U+017F LONG S to s), the last match winning;
// the client's SDK reads "usage" and "output_tokens" exactly. A reply or
// message_delta that carries a case-fold alias after the real member
// ("Usage", "output_to\u212aens") is billed by the alias while the client
// is shown, and the upstream charged, the real count: the pass-through
// relays the body as it came, so the two readings never meet.
func TestAtkPassUsageCaseFoldAlias(t *testing.T) {
	reply := `{"type":"message","usage":{"input_tokens":90000,"output_tokens":4000},"Usage":{"input_tokens":1,"output_tokens":1}}`
	if u, err := anthropic.ReplyUsage([]byte(reply)); err == nil && u.InputTokens != 90000 {
		t.Errorf("reply: billed %+v; the client reads usage 90000 in, 4000 out", u)
	}
	var u anthropic.Usage
	start := `{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}`
	delta := `{"type":"message_delta","usage":{"output_tokens":4000,"output_to\u212aens":1}}`
	if err := u.AddEvent(anthropic.EventMessageStart, []byte(start)); err != nil {
		t.Fatal(err)
	}
	if err := u.AddEvent(anthropic.EventMessageDelta, []byte(delta)); err == nil && u.OutputTokens != 4000 {
		t.Errorf("stream: billed %d output tokens; the client's message_delta says 4000", u.OutputTokens)
	}
}

// TestAtkPassUpstreamSecondModelKey: the gateway refuses a client body
// naming a member twice as encoding/json folds names (duplicate_key), but
// a body with only a case-fold alias of model ("MODEL", routed as auto:
// the exact key is absent) is passed through with the alias kept and
// arr's model appended: the upstream is sent two model keys, and which
// one it reads is its parser's choice (a first-wins or
// duplicate-refusing decoder reads the client's, or refuses arr's call).
func TestAtkPassUpstreamSecondModelKey(t *testing.T) {
	got, err := anthropic.Upstream([]byte(`{"MODEL":"claude-opus-4-1","max_tokens":5,"messages":[]}`), "claude-3-5-haiku-latest", 0, nil)
	if err != nil {
		return // refused: held
	}
	var n int
	dec := json.NewDecoder(bytes.NewReader(got))
	_, _ = dec.Token()
	for dec.More() {
		tok, _ := dec.Token()
		var v json.RawMessage
		_ = dec.Decode(&v)
		if strings.EqualFold(tok.(string), "model") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("sent upstream %s: %d members that encoding/json reads as model", got, n)
	}
}
