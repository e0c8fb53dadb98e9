package messages_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arr-dev/arr/readapi/gateway/messages"
)

// TestAtkPassUntranslatedTextIsNotSized: a pass-through request's chat
// translation is what sizes it (the prompt estimate behind the context
// check and the max_cost_usd ceiling's cap on max_tokens), and what it
// cannot express is left out of it. The same 120 kB of text that counts
// in a text block counts for nothing in a search_result block, in a
// document whose source is content blocks, or in an earlier turn's
// web_search_tool_result: Anthropic reads and bills every byte, arr
// routes the request as a few tokens, so a max_cost_usd of a cent lets
// through a request that costs ten times that, and a prompt over the
// model's context window is routed to it.
func TestAtkPassUntranslatedTextIsNotSized(t *testing.T) {
	text, _ := json.Marshal(strings.Repeat("the ceiling never sees this text ", 4000))
	wrap := func(content string) string {
		return `{"model":"mid","max_tokens":64,"max_cost_usd":0.01,"messages":[` + content + `]}`
	}
	plain := wrap(`{"role":"user","content":[{"type":"text","text":` + string(text) + `}]}`)
	cases := map[string]string{
		"search_result":    wrap(`{"role":"user","content":[{"type":"search_result","source":"http://127.0.0.1/a","title":"a","content":[{"type":"text","text":` + string(text) + `}]},{"type":"text","text":"sum up"}]}`),
		"content document": wrap(`{"role":"user","content":[{"type":"document","source":{"type":"content","content":[{"type":"text","text":` + string(text) + `}]}},{"type":"text","text":"sum up"}]}`),
		"web_search_tool_result": wrap(`{"role":"user","content":"find it"},{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},` +
			`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"http://127.0.0.1/","title":"t","encrypted_content":` + string(text) + `}]}]},{"role":"user","content":"more"}`),
	}
	sized := func(body string) int {
		ex, err := messages.Dialect{}.Parse([]byte(body))
		if err != nil {
			t.Fatalf("%v", err)
		}
		chat, _ := ex.Chat()
		return len(chat)
	}
	want := sized(plain) / 2
	for name, body := range cases {
		if got := sized(body); got < want {
			t.Errorf("%s: the chat request that sizes it is %d bytes; the same text in a text block sizes it at %d", name, got, want*2)
		}
	}
}
