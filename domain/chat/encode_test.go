package chat_test

import (
	"encoding/json"
	"testing"

	"github.com/arr-dev/arr/domain/chat"
)

// TestEscaping pins the two encoders: EscapeHTML writes what json.Marshal
// writes, Verbatim writes <, > and & as they are; neither ends in a
// newline. Body splices the extra fields after the chat ones, as given.
func TestEscaping(t *testing.T) {
	desc := "a <b> & c"
	r := &chat.Request{Model: "m", Messages: []chat.Message{{Role: "user", Content: []chat.Part{chat.TextPart("<x>"),
		{Type: "file", File: &chat.File{FileData: "d&"}}}}},
		Tools: []chat.Tool{{Type: "function", Function: chat.Function{Name: "f", Description: &desc, Parameters: json.RawMessage(`{"d": "<p>"}`)}}}}
	std, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		e    chat.Escaping
		want string
	}{
		{"escaped", chat.EscapeHTML, string(std)},
		{"verbatim", chat.Verbatim, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"<x>"},{"type":"file","file":{"file_data":"d&"}}]}],"tools":[{"type":"function","function":{"name":"f","description":"a <b> & c","parameters":{"d":"<p>"}}}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := chat.Marshal(r, tc.e)
			if err != nil || string(got) != tc.want {
				t.Errorf("got %s (%v)\nwant %s", got, err, tc.want)
			}
			body, err := chat.Body(r, []chat.Field{{Name: "quality_floor", Raw: json.RawMessage(`0.8`)}, {Name: "brand_pref", Raw: json.RawMessage(`"a<b"`)}}, tc.e)
			if want := tc.want[:len(tc.want)-1] + `,"quality_floor":0.8,"brand_pref":"a<b"}`; err != nil || string(body) != want {
				t.Errorf("body %s (%v)\nwant %s", body, err, want)
			}
		})
	}
	if string(std) == `{"model":"m"}` || !json.Valid(std) {
		t.Fatalf("json.Marshal: %s", std)
	}
}
