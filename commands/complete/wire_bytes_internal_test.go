package complete

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/arr-dev/arr/domain/chat"
)

// TestAssembledBytes pins the bytes the use case makes of a stream: the
// non-streamed reply it caches (keys in sorted order, HTML escaped, as
// encoding a map does) and the chunks a cached reply is replayed as.
func TestAssembledBytes(t *testing.T) {
	var a assembler
	for _, c := range []string{
		`{"id":"c","object":"chat.completion.chunk","created":7,"model":"up<m>","choices":[{"index":0,"delta":{"role":"assistant","content":"a <b>"},"finish_reason":null}]}`,
		`{"id":"x","created":8,"model":"other","choices":[{"index":0,"delta":{"content":" & c"},"finish_reason":null},{"index":1,"delta":{"content":"zz"}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"put","arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"get","arguments":"{\"q\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"<x>&\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`,
	} {
		var ch chat.ChunkSummary
		if err := json.Unmarshal([]byte(c), &ch); err != nil {
			t.Fatal(err)
		}
		a.add(&ch)
	}
	got := a.reply(Usage{Prompt: 3, Completion: 4})
	want := `{"choices":[{"finish_reason":"tool_calls","index":0,"logprobs":null,"message":{"content":"a \u003cb\u003e \u0026 c","refusal":null,"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get","arguments":"{\"q\":\"\u003cx\u003e\u0026\"}"}},{"id":"call_2","type":"function","function":{"name":"put","arguments":"{}"}}]}}],"created":7,"id":"c","model":"up\u003cm\u003e","object":"chat.completion","usage":{"completion_tokens":4,"prompt_tokens":3,"total_tokens":7}}`
	if string(got) != want {
		t.Errorf("assembled reply\n got: %s\nwant: %s", got, want)
	}
	if a.choices != 2 || a.bytes != len("a <b> & czz")+len("{}put")+len(`{"q":get`)+len(`"<x>&"}`) {
		t.Errorf("choices %d, bytes %d", a.choices, a.bytes)
	}

	var s Stream
	if err := s.prepareReplay(cached{body: got}); err != nil {
		t.Fatal(err)
	}
	replay := string(bytes.Join(s.replay, []byte("\n")))
	wantReplay := `{"choices":[{"delta":{"content":"","role":"assistant"},"finish_reason":null,"index":0,"logprobs":null}],"created":7,"id":"c","model":"up\u003cm\u003e","object":"chat.completion.chunk"}
{"choices":[{"delta":{"content":"a \u003cb\u003e \u0026 c"},"finish_reason":null,"index":0,"logprobs":null}],"created":7,"id":"c","model":"up\u003cm\u003e","object":"chat.completion.chunk"}
{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"q\":\"\u003cx\u003e\u0026\"}","name":"get"},"id":"call_1","index":0,"type":"function"}]},"finish_reason":null,"index":0,"logprobs":null}],"created":7,"id":"c","model":"up\u003cm\u003e","object":"chat.completion.chunk"}
{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{}","name":"put"},"id":"call_2","index":1,"type":"function"}]},"finish_reason":null,"index":0,"logprobs":null}],"created":7,"id":"c","model":"up\u003cm\u003e","object":"chat.completion.chunk"}
{"choices":[{"delta":{},"finish_reason":"tool_calls","index":0,"logprobs":null}],"created":7,"id":"c","model":"up\u003cm\u003e","object":"chat.completion.chunk"}`
	if replay != wantReplay {
		t.Errorf("replayed chunks\n got: %s\nwant: %s", replay, wantReplay)
	}
}
