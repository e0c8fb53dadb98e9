package gateway

import (
	"encoding/json"
	"testing"

	"github.com/arr-dev/arr/readapi/gateway/messages"
)

// FuzzMessagesRequest: a Messages API body (a client's, in Anthropic's
// shape) is refused with a 4xx, or it translates to a chat body that is a
// JSON object with at least one message and the model asked for (none
// named is auto, as on chat), without a panic.
func FuzzMessagesRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"claude-sonnet-4","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"auto","max_tokens":64,"system":[{"type":"text","text":"be brief"}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}],"stream":true}`,
		`{"model":"nano","max_tokens":64,"tools":[{"name":"get","description":"d","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"get"},"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"get","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"42"}]}]}`,
		`{"model":"nano","messages":[]}`, `{"max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, `{"model":"nano","max_tokens":-1,"messages":[{"role":"user","content":"x"}]}`,
		`{"model":"nano","max_tokens":8,"messages":[{"role":"tool","content":"x"}]}`, `{"model":"nano","max_tokens":8,"stop_sequences":["a",""],"messages":[{"role":"user","content":"x"}]}`,
		`[]`, `null`, `{"model":"nano","max_tokens":8,"messages":[{"role":"user","content":[{"type":"unknown"}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := messages.ParseRequest(body)
		if err != nil {
			refusedWith4xx(t, err)
			return
		}
		chat, err := r.ChatBody()
		if err != nil {
			refusedWith4xx(t, err)
			return
		}
		var out struct {
			Model    string            `json:"model"`
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(chat, &out); err != nil || out.Model != r.Model() || len(out.Messages) == 0 {
			t.Fatalf("accepted %s, translated to %s (%v)", body, chat, err)
		}
	})
}
