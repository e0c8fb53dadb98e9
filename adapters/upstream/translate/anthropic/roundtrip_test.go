package anthropic_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/anthropic"
	wire "github.com/arr-dev/arr/domain/anthropic"
	"github.com/arr-dev/arr/readapi/gateway/messages"
)

// commonRequests are Messages requests in the subset both directions
// translate: messagesIdentity when translating to chat (the ingress,
// readapi/gateway/messages) and back (Request) gives the request again,
// written as Request writes it (content as blocks).
var commonRequests = []struct {
	name             string
	body             string
	messagesIdentity bool
}{
	{"text", `{"model":"claude-x","max_tokens":100,"system":[{"type":"text","text":"Be brief."}],"messages":[{"role":"user","content":[{"type":"text","text":"Hi <b> & c"}]}],
		"temperature":0.5,"top_p":0.9,"stop_sequences":["END"],"metadata":{"user_id":"u-1"}}`, true},
	{"stream", `{"model":"claude-x","max_tokens":100,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]}`, true},
	{"tools", `{"model":"claude-x","max_tokens":2000,"messages":[
		{"role":"user","content":[{"type":"text","text":"Read a and b"}]},
		{"role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a"}},{"type":"tool_use","id":"toolu_2","name":"read","input":{"path":"b"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"A"}]},{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"B"}]},{"type":"text","text":"Go on."}]},
		{"role":"system","content":[{"type":"text","text":"Be careful."}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_3","name":"done","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_3"}]}],
		"tools":[{"name":"read","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}},{"name":"done","input_schema":{"type":"object"}}],
		"tool_choice":{"type":"any","disable_parallel_tool_use":true}}`, true},
	{"named tool", `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],
		"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"f"}}`, true},
	{"tool_choice none", `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],
		"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"none"}}`, true},
	{"images and a document", `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"x"},
		{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
		{"type":"image","source":{"type":"url","url":"https://127.0.0.1/a.jpg"}},
		{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="},"title":"r.pdf"}]}]}`, true},
	// An image in a tool result is a chat user message after the tool
	// message: back in Messages it follows the tool_result block.
	{"image in a tool result", `{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"look"}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"shot","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"here"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]}]}],
		"tools":[{"name":"shot","input_schema":{"type":"object"}}]}`, false},
	{"strings", `{"model":"claude-x","max_tokens":10,"system":"S","messages":[{"role":"user","content":"u"},{"role":"assistant","content":"a"},{"role":"user","content":"v"}]}`, false},
}

// ingress is the Messages ingress's chat body of a Messages request.
func ingress(t *testing.T, body []byte) []byte {
	t.Helper()
	r, err := messages.ParseRequest(body)
	if err != nil {
		t.Fatalf("ParseRequest(%s): %v", body, err)
	}
	c, err := r.ChatBody()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// TestRequestRoundTrip: chat → Messages → chat is the identity on every
// chat request the Messages ingress writes, and Messages → chat →
// Messages on the Messages requests marked so.
func TestRequestRoundTrip(t *testing.T) {
	for _, tc := range commonRequests {
		t.Run(tc.name, func(t *testing.T) {
			c := ingress(t, []byte(tc.body))
			tr, err := anthropic.Request(c, anthropic.Options{})
			if err != nil {
				t.Fatalf("Request(%s): %v", c, err)
			}
			if back := ingress(t, tr.Body); !reflect.DeepEqual(decode(t, back), decode(t, c)) {
				t.Errorf("chat → Messages → chat:\n%s\nwas\n%s\n(Messages %s)", back, c, tr.Body)
			}
			if tc.messagesIdentity && !reflect.DeepEqual(decode(t, tr.Body), decode(t, []byte(tc.body))) {
				t.Errorf("Messages → chat → Messages:\n%s\nwas\n%s", tr.Body, tc.body)
			}
		})
	}
}

// TestReplyRoundTrip: a Messages reply → chat (Reply) → Messages (the
// ingress's FromChat) keeps its content, stop reason and usage (cache
// writes aside: chat's usage has no standard field for them, so FromChat
// counts them as input).
func TestReplyRoundTrip(t *testing.T) {
	for _, tc := range []struct{ name, reply string }{
		{"text", `{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"Hi <b>"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":40,"output_tokens":2}}`},
		{"tools", `{"id":"msg_2","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2}}`},
		{"tool only", `{"id":"msg_3","type":"message","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"toolu_1","name":"now","input":{}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2}}`},
		{"max tokens", `{"id":"msg_4","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"It was"}],"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2}}`},
		{"refusal", `{"id":"msg_5","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"No."}],"stop_reason":"refusal","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := anthropic.Reply([]byte(tc.reply), 1)
			if err != nil {
				t.Fatal(err)
			}
			var orig map[string]any
			_ = json.Unmarshal([]byte(tc.reply), &orig)
			back, err := messages.FromChat(r.Body, orig["id"].(string), 0, 0)
			if err != nil {
				t.Fatalf("FromChat(%s): %v", r.Body, err)
			}
			got := decode(t, back).(map[string]any)
			delete(got["usage"].(map[string]any), "service_tier")
			if !reflect.DeepEqual(got, orig) {
				t.Errorf("Messages → chat → Messages:\n%s\nwas\n%s\n(chat %s)", back, tc.reply, r.Body)
			}
		})
	}
}

// TestStreamRoundTrip: a Messages stream → chat chunks (Stream) →
// Messages events (the ingress's Stream) has the same blocks, deltas,
// stop reason and usage.
func TestStreamRoundTrip(t *testing.T) {
	sse := `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":7,"cache_read_input_tokens":300,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me <look>."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"a\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":12}}

event: message_stop
data: {"type":"message_stop"}

`
	evs := readSSE(t, []byte(sse))
	s := anthropic.NewStream(anthropic.StreamOptions{Created: 1, IncludeUsage: true})
	back := messages.NewStream("msg_1", "claude-x")
	var out []messages.Event
	for _, ev := range evs {
		chunks, err := s.Event(ev.name, ev.data)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chunks {
			e, err := back.Chunk(c)
			if err != nil {
				t.Fatalf("ingress Chunk(%s): %v", c, err)
			}
			out = append(out, e...)
		}
	}
	out = append(out, back.Finish()...)
	var got []sseEvent
	for _, e := range out {
		if e.Type != wire.EventPing {
			got = append(got, sseEvent{name: e.Type, data: e.Data})
		}
	}
	if len(got) != len(evs) {
		t.Fatalf("%d events back, want %d: %s", len(got), len(evs), eventNames(got))
	}
	var uWant, uGot wire.Usage
	for i := range evs {
		if got[i].name != evs[i].name {
			t.Fatalf("event %d is %s, want %s", i, got[i].name, evs[i].name)
		}
		_ = uWant.AddEvent(evs[i].name, evs[i].data)
		_ = uGot.AddEvent(got[i].name, got[i].data)
		if evs[i].name == wire.EventMessageStart || evs[i].name == wire.EventMessageDelta {
			continue // usage compared whole below
		}
		if w, g := decode(t, evs[i].data), decode(t, got[i].data); !reflect.DeepEqual(w, g) {
			t.Errorf("event %d:\n%s\nwant\n%s", i, got[i].data, evs[i].data)
		}
	}
	if uGot != uWant {
		t.Errorf("usage %+v, want %+v", uGot, uWant)
	}
	var md struct {
		Delta struct {
			StopReason string `json:"stop_reason"`
		} `json:"delta"`
	}
	_ = json.Unmarshal(got[len(got)-2].data, &md)
	if md.Delta.StopReason != "tool_use" {
		t.Errorf("stop_reason %q", md.Delta.StopReason)
	}
}

func eventNames(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.name)
	}
	return out
}
