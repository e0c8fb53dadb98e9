package gemini_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/gemini"
)

// Every tool call id a reply gives keeps to [A-Za-z0-9_-]: Gemini's own
// id outside it (or carrying SignatureSep) is replaced by one made from
// the call, and a signature that is not base64 bytes is left out.
func TestToolCallIDsKeepToTheAlphabet(t *testing.T) {
	alphabet := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	for _, tc := range []struct{ id, sig string }{
		{"fc/1+2=", ""}, {"a__thought__b", ""}, {"fc-1", "not base64!"}, {"", "CiQB-_x9zQ"}, {"", "CiQB+/x9zQ=="},
	} {
		c, err := gemini.Completion([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"`+tc.id+`","name":"f","args":{}},"thoughtSignature":"`+tc.sig+`"}]},"finishReason":"STOP"}]}`), "m", 1)
		if err != nil {
			t.Fatal(err)
		}
		ch, _ := c.First()
		id := ch.Message.ToolCalls[0].ID
		if !alphabet.MatchString(id) {
			t.Errorf("id %q (Gemini's %q, signature %q) is outside the alphabet", id, tc.id, tc.sig)
		}
		if tc.id == "fc-1" && id != "fc-1" || tc.sig == "CiQB+/x9zQ==" && !strings.HasSuffix(id, gemini.SignatureSep+"CiQB-_x9zQ") {
			t.Errorf("id %q (Gemini's %q, signature %q)", id, tc.id, tc.sig)
		}
	}
}
