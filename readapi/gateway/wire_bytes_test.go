package gateway_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arr-dev/arr/readapi/gateway/messages"
	"github.com/arr-dev/arr/readapi/gateway/responses"
)

var updateWire = flag.Bool("update-wire", false, "rewrite testdata/wire/*.golden from the code under test")

// Bodies with every part the two dialects translate, and text that HTML
// escaping would change (<, > and &): the bytes each route sends upstream
// and to its client are pinned by testdata/wire, written by the code
// before the dialects shared one set of chat wire types. The Messages
// route encodes without HTML escaping throughout; the Responses route
// escapes its chat request (json.Marshal) and not its replies.
const (
	messagesBody = `{"model":"claude-<x>","max_tokens":64,"system":[{"type":"text","text":"be <brief> & kind"}],
	"metadata":{"user_id":"u<1>"},"stop_sequences":["</end>"],"temperature":0.5,"top_p":0.9,"stream":%s,
	"quality_floor":0.8, "brand_pref":"open<ai>", "max_cost_usd": 1.5,
	"tools":[{"name":"get","description":"fetch <a> & b","input_schema":{"type":"object","description":"<s>"}},{"name":"put","input_schema":{"type":"object"}}],
	"tool_choice":{"type":"tool","name":"get","disable_parallel_tool_use":true},
	"messages":[
	 {"role":"user","content":[{"type":"text","text":"hi <b>&amp;</b>"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
	   {"type":"image","source":{"type":"url","url":"http://127.0.0.1/a.png?x=1&y=<2>"}},
	   {"type":"document","title":"<doc>.pdf","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}},
	   {"type":"document","source":{"type":"text","data":"plain & <text>"}}]},
	 {"role":"assistant","content":[{"type":"thinking","thinking":"x"},{"type":"text","text":"calling <get>"},{"type":"tool_use","id":"t1","name":"get","input":{ "q" : "a<b" }}]},
	 {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"42 & <43>"},{"type":"image","source":{"type":"url","url":"http://127.0.0.1/r.png"}}]},{"type":"text","text":"and?"}]},
	 {"role":"system","content":"between <turns>"},
	 {"role":"assistant","content":[]}
	]}`

	responsesBody = `{"model":"gpt-<x>","instructions":"be <brief> & kind","stream":%s,"temperature":0.5,"top_p":0.9,"max_output_tokens":100,
	"metadata":{"k":"<v>"},"user":"u<1>","safety_identifier":"s&1","prompt_cache_key":"p<k>","parallel_tool_calls":false,
	"reasoning":{"effort":"low"},"truncation":"auto","quality_floor":0.8, "brand_pref":"open<ai>", "max_cost_usd": { "usd" : 1 },
	"tools":[{"type":"function","name":"get","description":"fetch <a> & b","parameters":{"type":"object", "description":"<s>"},"strict":true},{"type":"function","name":"put","description":""}],
	"tool_choice":{"type":"function","name":"get"},
	"text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object","description":"<o>"},"description":"d<&>","strict":true},"verbosity":"low"},
	"input":[
	 {"role":"developer","content":"dev <note>"},
	 {"role":"user","content":[{"type":"input_text","text":"hi <b>&amp;</b>"},{"type":"input_image","image_url":"http://127.0.0.1/a.png?x=1&y=<2>","detail":"high"},
	   {"type":"input_file","file_data":"data:application/pdf;base64,JVBERi0=","filename":"<doc>.pdf"},{"type":"input_file","file_data":"data:application/pdf;base64,JVBERi0="}]},
	 {"role":"assistant","content":[{"type":"output_text","text":"calling <get>"},{"type":"refusal","refusal":"no <way>"}]},
	 {"type":"function_call","call_id":"c1","name":"get","arguments":"{\"q\":\"a<b\"}"},
	 {"type":"function_call","call_id":"c2","name":"put","arguments":"{}"},
	 {"type":"function_call_output","call_id":"c1","output":"42 & <43>"},
	 {"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"a<"},{"type":"input_text","text":"b&"}]},
	 {"type":"reasoning","summary":[]}
	]}`

	// completion is an upstream's reply (with the gateway's routing
	// object spliced in) with text, a refusal and tool calls.
	completion = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"up<model>","choices":[{"index":0,"message":{"role":"assistant","content":"a <b> & c","refusal":null,
	"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get","arguments":"{\"q\": \"<x>&\"}"}},{"id":"","type":"function","function":{"name":"put","arguments":""}}]},"finish_reason":"tool_calls"}],
	"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}},
	"routing":{"tier":"nano","note":"<&>"}}`
	refusalCompletion = `{"model":"m","choices":[{"index":1,"message":{"content":"other"},"finish_reason":"stop"},{"index":0,"message":{"content":"","refusal":"no <way>"},"finish_reason":"stop"}]}`
)

// chunks are a streamed completion's chunks, then the gateway's last one
// (usage and routing).
var chunks = []string{
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"up<model>","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
	`{"id":"c","model":"up<model>","choices":[{"index":0,"delta":{"content":"a <b>"},"finish_reason":null}]}`,
	`{"id":"c","model":"up<model>","choices":[{"index":0,"delta":{"refusal":" & no"},"finish_reason":null}]}`,
	`{"id":"c","model":"up<model>","choices":[{"index":1,"delta":{"content":"ignored"},"finish_reason":null}]}`,
	`{"id":"c","model":"up<model>","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get","arguments":"{\"q\":"}}]},"finish_reason":null}]}`,
	`{"id":"c","model":"up<model>","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"<x>&\"}"}}]},"finish_reason":null}]}`,
	`{"id":"c","model":"up<model>","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"put","arguments":"{}"}}]},"finish_reason":null}]}`,
	`{"id":"c","model":"up<model>","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	`{"id":"c","object":"chat.completion.chunk","created":1,"model":"up<model>","choices":[],"routing":{"tier":"nano","note":"<&>"},"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4}}}`,
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "wire", name+".golden")
	if *updateWire {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update-wire from the code before a change)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: the bytes changed\n got: %s\nwant: %s", name, got, want)
	}
}

func events[E any](evs []E, format func(E) (string, []byte)) []byte {
	var b bytes.Buffer
	for _, e := range evs {
		name, data := format(e)
		b.WriteString("event: " + name + "\ndata: ")
		b.Write(data)
		b.WriteString("\n\n")
	}
	return b.Bytes()
}

func streamArg(stream bool) string {
	if stream {
		return "true"
	}
	return "false"
}

func TestWireBytesMessages(t *testing.T) {
	for _, stream := range []bool{false, true} {
		body := []byte(sprintf(messagesBody, streamArg(stream)))
		r, err := messages.ParseRequest(body)
		if err != nil {
			t.Fatal(err)
		}
		chat, err := r.ChatBody()
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "messages-chat-stream-"+streamArg(stream), chat)
	}
	for name, c := range map[string]string{"tools": completion, "refusal": refusalCompletion} {
		out, err := messages.FromChat([]byte(c), "msg_1", 7, 3)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "messages-reply-"+name, out)
	}
	format := func(e messages.Event) (string, []byte) { return e.Type, e.Data }
	var all []byte
	s := messages.NewStream("msg_1", "claude-<x>")
	for _, c := range chunks {
		evs, err := s.Chunk([]byte(c))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, events(evs, format)...)
	}
	all = append(all, events(s.Finish(), format)...)
	golden(t, "messages-stream", all)
	s = messages.NewStream("msg_2", "")
	evs, err := s.Chunk([]byte(chunks[1]))
	if err != nil {
		t.Fatal(err)
	}
	all = append(events(evs, format), events(s.Fail("api_error", "upstream_stream_cut", "cut <&>"), format)...)
	golden(t, "messages-stream-failed", all)
	golden(t, "messages-error", messages.ErrorBody(529, "bodies_in_flight", "busy <&>", "f<1>", "req<1>"))
}

func TestWireBytesResponses(t *testing.T) {
	var req *responses.Request
	for _, stream := range []bool{false, true} {
		body := []byte(sprintf(responsesBody, streamArg(stream)))
		r, err := responses.ParseRequest(body)
		if err != nil {
			t.Fatal(err)
		}
		chat, err := r.ChatBody()
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "responses-chat-stream-"+streamArg(stream), chat)
		req = r
	}
	for name, c := range map[string]string{"tools": completion, "refusal": refusalCompletion} {
		out, err := responses.FromChat([]byte(c), req, "resp_1", 1700000000)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "responses-reply-"+name, out)
	}
	format := func(e responses.Event) (string, []byte) { return e.Type, e.Data }
	var all []byte
	s := responses.NewStream(req, "resp_1", 1700000000)
	for _, c := range chunks {
		evs, err := s.Chunk([]byte(c))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, events(evs, format)...)
	}
	all = append(all, events(s.Finish(), format)...)
	golden(t, "responses-stream", all)
	s = responses.NewStream(req, "resp_2", 1700000000)
	evs, err := s.Chunk([]byte(chunks[1]))
	if err != nil {
		t.Fatal(err)
	}
	all = append(events(evs, format), events(s.Fail("upstream_stream_cut", "cut <&>"), format)...)
	golden(t, "responses-stream-failed", all)
}

func sprintf(format, arg string) string { return strings.Replace(format, "%s", arg, 1) }
