package responses_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/responses"

	resp "github.com/arr-dev/arr/readapi/gateway/responses"
)

// chunk is a chat.completion.chunk with choice 0's delta and finish.
func chunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-x-mini","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + f + `}]}`
}

// arrLast is the gateway's last chunk: no choices, usage and routing.
const arrLast = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-x-mini","choices":[],"routing":` + routingJSON + `,"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}`

func textChunks(words ...string) []string {
	out := []string{chunk(`{"role":"assistant","content":"","refusal":null}`, "")}
	for _, w := range words {
		b, _ := json.Marshal(w)
		out = append(out, chunk(`{"content":`+string(b)+`}`, ""))
	}
	return out
}

func callChunks(index int, id, name string, args ...string) []string {
	i := string(rune('0' + index))
	out := []string{chunk(`{"tool_calls":[{"index":`+i+`,"id":"`+id+`","type":"function","function":{"name":"`+name+`","arguments":""}}]}`, "")}
	for _, a := range args {
		b, _ := json.Marshal(a)
		out = append(out, chunk(`{"tool_calls":[{"index":`+i+`,"function":{"arguments":`+string(b)+`}}]}`, ""))
	}
	return out
}

// run feeds chunks and finishes; it checks what every event must satisfy
// and returns the events decoded by openai-go.
func run(t testing.TB, req *resp.Request, chunks []string, fail bool) []responses.ResponseStreamEventUnion {
	t.Helper()
	s := resp.NewStream(req, "resp_s", 1700000000)
	var evs []resp.Event
	for _, c := range chunks {
		ev, err := s.Chunk([]byte(c))
		if err != nil {
			t.Fatalf("Chunk(%s): %v", c, err)
		}
		evs = append(evs, ev...)
	}
	if fail {
		evs = append(evs, s.Fail("upstream_stream_cut", "the upstream broke off")...)
	} else {
		evs = append(evs, s.Finish()...)
	}
	if again := s.Finish(); again != nil {
		t.Fatalf("Finish after the end: %v", again)
	}
	var out []responses.ResponseStreamEventUnion
	for i, e := range evs {
		var u responses.ResponseStreamEventUnion
		if err := json.Unmarshal(e.Data, &u); err != nil {
			t.Fatalf("event %d %s: openai-go cannot read it: %v", i, e.Data, err)
		}
		if u.Type != e.Type || u.SequenceNumber != int64(i) {
			t.Fatalf("event %d: type %q (SSE name %q), sequence_number %d", i, u.Type, e.Type, u.SequenceNumber)
		}
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(e.Data, &raw)
		if _, ok := raw["error"]; ok {
			t.Fatalf("event %d has a top-level error field, which openai-go reads as a stream error: %s", i, e.Data)
		}
		out = append(out, u)
	}
	return out
}

func types(evs []responses.ResponseStreamEventUnion) []string {
	var ts []string
	for _, e := range evs {
		ts = append(ts, strings.TrimPrefix(e.Type, "response."))
	}
	return ts
}

func wantTypes(t testing.TB, evs []responses.ResponseStreamEventUnion, want ...string) {
	t.Helper()
	if got := types(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
}

func TestStreamText(t *testing.T) {
	req := parse(t, `{"model":"auto","input":"Say hello","stream":true,"instructions":"Be nice."}`)
	evs := run(t, req, append(append(textChunks("Hello ", "from ", "arr"), chunk(`{}`, "stop")), arrLast), false)
	wantTypes(t, evs, "created", "in_progress", "output_item.added", "content_part.added",
		"output_text.delta", "output_text.delta", "output_text.delta", "output_text.done", "content_part.done", "output_item.done", "completed")
	created := evs[0].AsResponseCreated()
	if created.Response.Status != "in_progress" || created.Response.ID != "resp_s" || created.Response.Model != "gpt-x-mini" || len(created.Response.Output) != 0 || created.Response.Instructions.OfString != "Be nice." {
		t.Fatalf("created %s", evs[0].RawJSON())
	}
	added := evs[2].AsResponseOutputItemAdded()
	if added.OutputIndex != 0 || added.Item.ID != "msg_s_0" || added.Item.Type != "message" || added.Item.Status != "in_progress" {
		t.Fatalf("item added %s", evs[2].RawJSON())
	}
	part := evs[3].AsResponseContentPartAdded()
	if part.ItemID != "msg_s_0" || part.ContentIndex != 0 || part.Part.Type != "output_text" || part.Part.Text != "" {
		t.Fatalf("part added %s", evs[3].RawJSON())
	}
	var text string
	for _, e := range evs[4:7] {
		d := e.AsResponseOutputTextDelta()
		if d.ItemID != "msg_s_0" || d.OutputIndex != 0 || d.ContentIndex != 0 || !d.JSON.Logprobs.Valid() {
			t.Fatalf("delta %s", e.RawJSON())
		}
		text += d.Delta
	}
	if done := evs[7].AsResponseOutputTextDone(); text != "Hello from arr" || done.Text != text || done.ItemID != "msg_s_0" {
		t.Fatalf("text %q, done %s", text, evs[7].RawJSON())
	}
	if pd := evs[8].AsResponseContentPartDone(); pd.Part.Text != text {
		t.Fatalf("part done %s", evs[8].RawJSON())
	}
	if id := evs[9].AsResponseOutputItemDone(); id.Item.Status != "completed" || id.Item.Content[0].Text != text {
		t.Fatalf("item done %s", evs[9].RawJSON())
	}
	r := evs[10].AsResponseCompleted().Response
	if r.Status != "completed" || r.OutputText() != text || r.Usage.InputTokens != 9 || r.Usage.OutputTokens != 4 || r.Usage.TotalTokens != 13 {
		t.Fatalf("completed %s", evs[10].RawJSON())
	}
	var routing struct {
		AuditHash string `json:"audit_hash"`
	}
	if err := json.Unmarshal([]byte(r.JSON.ExtraFields["routing"].Raw()), &routing); err != nil || len(routing.AuditHash) != 64 {
		t.Fatalf("routing on response.completed: %s", evs[10].RawJSON())
	}
}

func TestStreamToolCalls(t *testing.T) {
	req := parse(t, `{"input":"Weather and time?","stream":true,"tools":[{"type":"function","name":"get_weather"},{"type":"function","name":"get_time"}]}`)
	chunks := []string{chunk(`{"role":"assistant","content":"","refusal":null}`, "")}
	chunks = append(chunks, callChunks(0, "call_1", "get_weather", `{"city":`, `"Paris"}`)...)
	chunks = append(chunks, callChunks(1, "call_2", "get_time", `{}`)...)
	chunks = append(chunks, chunk(`{}`, "tool_calls"), arrLast)
	evs := run(t, req, chunks, false)
	wantTypes(t, evs, "created", "in_progress",
		"output_item.added", "function_call_arguments.delta", "function_call_arguments.delta", "function_call_arguments.done", "output_item.done",
		"output_item.added", "function_call_arguments.delta", "function_call_arguments.done", "output_item.done", "completed")
	a := evs[2].AsResponseOutputItemAdded()
	if a.OutputIndex != 0 || a.Item.Type != "function_call" || a.Item.ID != "fc_s_0" || a.Item.CallID != "call_1" || a.Item.Name != "get_weather" || a.Item.Arguments != "" {
		t.Fatalf("added %s", evs[2].RawJSON())
	}
	if d := evs[3].AsResponseFunctionCallArgumentsDelta(); d.ItemID != "fc_s_0" || d.OutputIndex != 0 || d.Delta != `{"city":` {
		t.Fatalf("delta %s", evs[3].RawJSON())
	}
	if d := evs[5].AsResponseFunctionCallArgumentsDone(); d.Arguments != `{"city":"Paris"}` || d.ItemID != "fc_s_0" || d.JSON.ExtraFields["name"].Raw() != `"get_weather"` {
		t.Fatalf("done %s", evs[5].RawJSON())
	}
	if d := evs[6].AsResponseOutputItemDone(); d.Item.Arguments != `{"city":"Paris"}` || d.Item.Status != "completed" {
		t.Fatalf("item done %s", evs[6].RawJSON())
	}
	if a := evs[7].AsResponseOutputItemAdded(); a.OutputIndex != 1 || a.Item.ID != "fc_s_1" || a.Item.CallID != "call_2" {
		t.Fatalf("second added %s", evs[7].RawJSON())
	}
	r := evs[len(evs)-1].AsResponseCompleted().Response
	if len(r.Output) != 2 || r.Output[1].AsFunctionCall().Arguments != "{}" || r.Output[0].AsFunctionCall().Name != "get_weather" {
		t.Fatalf("completed %s", evs[len(evs)-1].RawJSON())
	}
}

func TestStreamTextThenCallAndBack(t *testing.T) {
	req := parse(t, `{"input":"x","stream":true,"tools":[{"type":"function","name":"f"}]}`)
	chunks := textChunks("Checking.")
	chunks = append(chunks, callChunks(0, "", "f", "{}")...)
	chunks = append(chunks, chunk(`{"content":"Done."}`, ""), chunk(`{}`, "stop"))
	evs := run(t, req, chunks, false)
	wantTypes(t, evs, "created", "in_progress",
		"output_item.added", "content_part.added", "output_text.delta", "output_text.done", "content_part.done", "output_item.done",
		"output_item.added", "function_call_arguments.delta", "function_call_arguments.done", "output_item.done",
		"output_item.added", "content_part.added", "output_text.delta", "output_text.done", "content_part.done", "output_item.done", "completed")
	r := evs[len(evs)-1].AsResponseCompleted().Response
	if len(r.Output) != 3 || r.Output[1].AsFunctionCall().CallID != "call_s_0" || r.Output[2].ID != "msg_s_2" || r.OutputText() != "Checking.Done." {
		t.Fatalf("completed %s", evs[len(evs)-1].RawJSON())
	}
	if string(r.JSON.Usage.Raw()) != "null" {
		t.Fatalf("usage invented: %s", r.JSON.Usage.Raw())
	}
}

func TestStreamIncomplete(t *testing.T) {
	req := parse(t, `{"input":"x","stream":true,"max_output_tokens":2}`)
	evs := run(t, req, append(textChunks("Once ", "upon"), chunk(`{}`, "length"), arrLast), false)
	last := evs[len(evs)-1]
	if last.Type != "response.incomplete" {
		t.Fatalf("last event %s", last.RawJSON())
	}
	r := last.AsResponseIncomplete().Response
	if r.Status != "incomplete" || r.IncompleteDetails.Reason != "max_output_tokens" || r.Output[0].Status != "incomplete" || r.Usage.OutputTokens != 4 || r.MaxOutputTokens != 2 {
		t.Fatalf("incomplete %s", last.RawJSON())
	}
	if done := evs[len(evs)-2].AsResponseOutputItemDone(); done.Item.Status != "incomplete" {
		t.Fatalf("item done %s", evs[len(evs)-2].RawJSON())
	}
}

func TestStreamFail(t *testing.T) {
	req := parse(t, `{"input":"x","stream":true}`)
	cut := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-x-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"error"}],"routing":` + routingJSON + `}`
	evs := run(t, req, append(textChunks("Half "), cut), true)
	wantTypes(t, evs, "created", "in_progress", "output_item.added", "content_part.added", "output_text.delta",
		"output_text.done", "content_part.done", "output_item.done", "failed")
	r := evs[len(evs)-1].AsResponseFailed().Response
	if r.Status != "failed" || r.Error.Code != "upstream_stream_cut" || r.Error.Message != "the upstream broke off" || r.Output[0].Status != "incomplete" || r.OutputText() != "Half " {
		t.Fatalf("failed %s", evs[len(evs)-1].RawJSON())
	}
	if _, ok := r.JSON.ExtraFields["routing"]; !ok {
		t.Fatalf("routing lost on failure: %s", evs[len(evs)-1].RawJSON())
	}
}

func TestStreamEndsWithoutChunks(t *testing.T) {
	req := parse(t, `{"model":"small","input":"x","stream":true}`)
	evs := run(t, req, nil, false)
	wantTypes(t, evs, "created", "in_progress", "output_item.added", "content_part.added", "output_text.done", "content_part.done", "output_item.done", "completed")
	if r := evs[0].AsResponseCreated().Response; r.Model != "small" {
		t.Fatalf("model before any chunk: %s", evs[0].RawJSON())
	}
	s := resp.NewStream(req, "resp_f", 1)
	if evs := s.Fail("audit_unavailable", "not recorded"); len(evs) != 3 || evs[2].Type != "response.failed" {
		t.Fatalf("Fail first: %v", evs)
	}
}

func TestStreamRefusal(t *testing.T) {
	req := parse(t, `{"input":"x","stream":true}`)
	evs := run(t, req, []string{chunk(`{"role":"assistant","content":"","refusal":null}`, ""), chunk(`{"refusal":"I can't "}`, ""), chunk(`{"refusal":"help."}`, ""), chunk(`{}`, "stop")}, false)
	wantTypes(t, evs, "created", "in_progress", "output_item.added", "content_part.added", "refusal.delta", "refusal.delta", "refusal.done", "content_part.done", "output_item.done", "completed")
	if d := evs[6].AsResponseRefusalDone(); d.Refusal != "I can't help." {
		t.Fatalf("refusal done %s", evs[6].RawJSON())
	}
	if p := evs[3].AsResponseContentPartAdded(); p.Part.Type != "refusal" {
		t.Fatalf("part %s", evs[3].RawJSON())
	}
}

func TestStreamRefusesBadChunks(t *testing.T) {
	req := parse(t, `{"input":"x","stream":true,"tools":[{"type":"function","name":"f"},{"type":"function","name":"g"}]}`)
	s := resp.NewStream(req, "resp_b", 1)
	if _, err := s.Chunk([]byte(`not json`)); err == nil {
		t.Fatal("a chunk that is not JSON was taken")
	}
	for _, c := range append(callChunks(0, "a", "f"), callChunks(1, "b", "g")...) {
		if _, err := s.Chunk([]byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Chunk([]byte(callChunks(0, "", "", "late")[1])); err == nil || !strings.Contains(err.Error(), "tool call 0") {
		t.Fatalf("arguments for a closed call: %v", err)
	}
	s.Finish()
	if _, err := s.Chunk([]byte(chunk(`{"content":"x"}`, ""))); err == nil {
		t.Fatal("a chunk after the end was taken")
	}
}

// TestStreamMatchesFromChat: for the same reply the streamed
// response.completed and the non-streamed Response have the same output,
// status and usage.
func TestStreamMatchesFromChat(t *testing.T) {
	req := parse(t, `{"input":"x","tools":[{"type":"function","name":"f"}]}`)
	usage := `{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}`
	tests := []struct {
		name    string
		message string
		finish  string
		chunks  []string
	}{
		{"text", `{"role":"assistant","content":"Hi there"}`, "stop", textChunks("Hi ", "there")},
		{"call", `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}`, "tool_calls",
			append([]string{chunk(`{"role":"assistant","content":""}`, "")}, callChunks(0, "call_1", "f", `{"a":`, `1}`)...)},
		{"text and call", `{"role":"assistant","content":"Let me see.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`, "tool_calls",
			append(textChunks("Let me ", "see."), callChunks(0, "call_1", "f", "{}")...)},
		{"cut by length", `{"role":"assistant","content":"Once"}`, "length", textChunks("Once")},
		{"empty", `{"role":"assistant","content":""}`, "stop", textChunks()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chat := `{"id":"c","object":"chat.completion","created":1,"model":"gpt-x-mini","choices":[{"index":0,"message":` + tc.message + `,"finish_reason":"` + tc.finish + `"}],"usage":` + usage + `,"routing":` + routingJSON + `}`
			b, err := resp.FromChat([]byte(chat), req, "resp_s", 1700000000)
			if err != nil {
				t.Fatal(err)
			}
			evs := run(t, req, append(tc.chunks, chunk(`{}`, tc.finish), arrLast), false)
			var streamed map[string]any
			_ = json.Unmarshal([]byte(evs[len(evs)-1].JSON.Response.Raw()), &streamed)
			var whole map[string]any
			_ = json.Unmarshal(b, &whole)
			for _, f := range []string{"output", "status", "usage", "incomplete_details", "routing", "model", "tools"} {
				if !reflect.DeepEqual(streamed[f], whole[f]) {
					sf, _ := json.Marshal(streamed[f])
					wf, _ := json.Marshal(whole[f])
					t.Fatalf("%s differs:\nstreamed %s\n   whole %s", f, sf, wf)
				}
			}
		})
	}
}
