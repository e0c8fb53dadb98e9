package responses_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/responses"

	resp "github.com/arr-dev/arr/readapi/gateway/responses"
)

const routingJSON = `{"tier":"nano","model":"nano-1","vendor":"acme","difficulty_score":0.1,"audit_hash":"` +
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" + `","cost_per_1k":0.1,"cost_usd":0.00001,"cache_hit":false,"elapsed_sec":0.01,"attempts":1,"predicted_quality":0.8,"audit_position":7}`

func parse(t testing.TB, body string) *resp.Request {
	t.Helper()
	r, err := resp.ParseRequest([]byte(body))
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	return r
}

// official decodes a Response as openai-go does and checks the fields
// every Response has.
func official(t testing.TB, b []byte) (responses.Response, map[string]json.RawMessage) {
	t.Helper()
	var r responses.Response
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("openai-go cannot read %s: %v", b, err)
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(b, &raw)
	if r.Object != "response" || !strings.HasPrefix(r.ID, "resp_") || r.CreatedAt != 1700000000 {
		t.Fatalf("envelope %s", b)
	}
	if _, ok := raw["output_text"]; ok {
		t.Fatalf("output_text is the SDKs' to compute, not a wire field: %s", b)
	}
	for _, f := range []string{"error", "incomplete_details", "instructions", "metadata", "model", "output", "parallel_tool_calls", "temperature", "tool_choice", "tools", "top_p", "previous_response_id", "text", "status", "usage"} {
		if _, ok := raw[f]; !ok {
			t.Fatalf("field %s missing: %s", f, b)
		}
	}
	if string(raw["previous_response_id"]) != "null" || string(raw["error"]) != "null" {
		t.Fatalf("previous_response_id/error not null: %s", b)
	}
	return r, raw
}

func TestFromChatText(t *testing.T) {
	req := parse(t, `{"model":"auto","instructions":"Be nice.","input":"Say hello","temperature":0.5,"max_output_tokens":50,"metadata":{"k":"v"},"text":{"format":{"type":"json_schema","name":"x","schema":{"type":"object"},"strict":true}}}`)
	chat := `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-x-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello <b>there</b>","refusal":null},"logprobs":null,"finish_reason":"stop"}],
		"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":1}},"routing":` + routingJSON + `}`
	b, err := resp.FromChat([]byte(chat), req, "resp_abc", 1700000000)
	if err != nil {
		t.Fatal(err)
	}
	r, raw := official(t, b)
	if r.Status != responses.ResponseStatusCompleted || r.Model != "gpt-x-mini" || r.OutputText() != "Hello <b>there</b>" {
		t.Fatalf("status %q model %q text %q", r.Status, r.Model, r.OutputText())
	}
	if !strings.Contains(string(b), "Hello <b>there</b>") {
		t.Fatalf("text escaped: %s", b)
	}
	if len(r.Output) != 1 {
		t.Fatalf("output %s", b)
	}
	msg := r.Output[0].AsMessage()
	if msg.ID != "msg_abc_0" || msg.Role != "assistant" || msg.Status != responses.ResponseOutputMessageStatusCompleted || msg.Content[0].AsOutputText().Annotations == nil {
		t.Fatalf("message %+v", msg)
	}
	u := r.Usage
	if u.InputTokens != 12 || u.OutputTokens != 3 || u.TotalTokens != 15 || u.InputTokensDetails.CachedTokens != 4 || u.OutputTokensDetails.ReasoningTokens != 1 {
		t.Fatalf("usage %+v", u)
	}
	if r.Instructions.OfString != "Be nice." || r.Temperature != 0.5 || r.MaxOutputTokens != 50 || r.Metadata["k"] != "v" || !r.ParallelToolCalls {
		t.Fatalf("echo: %s", b)
	}
	if r.Text.Format.Type != "json_schema" || r.Text.Format.Name != "x" || !r.Text.Format.Strict {
		t.Fatalf("text echo %s", raw["text"])
	}
	if r.ToolChoice.OfToolChoiceMode != "auto" || len(r.Tools) != 0 {
		t.Fatalf("tool echo %s %s", raw["tool_choice"], raw["tools"])
	}
	var routing struct {
		AuditHash     string `json:"audit_hash"`
		AuditPosition int    `json:"audit_position"`
	}
	if err := json.Unmarshal([]byte(r.JSON.ExtraFields["routing"].Raw()), &routing); err != nil || len(routing.AuditHash) != 64 || routing.AuditPosition != 7 {
		t.Fatalf("routing %q: %v", r.JSON.ExtraFields["routing"].Raw(), err)
	}
}

func TestFromChatToolCalls(t *testing.T) {
	req := parse(t, `{"input":"Weather and time in Paris?","tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}},{"type":"function","name":"get_time","description":"Time"}],"tool_choice":{"type":"function","name":"get_time"},"parallel_tool_calls":false}`)
	chat := `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[
		{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
		{"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":20,"total_tokens":25}}`
	b, err := resp.FromChat([]byte(chat), req, "resp_t", 1700000000)
	if err != nil {
		t.Fatal(err)
	}
	r, raw := official(t, b)
	if len(r.Output) != 2 || r.OutputText() != "" {
		t.Fatalf("output %s", b)
	}
	for i, want := range []struct{ id, call, name, args string }{{"fc_t_0", "call_1", "get_weather", `{"city":"Paris"}`}, {"fc_t_1", "call_2", "get_time", "{}"}} {
		fc := r.Output[i].AsFunctionCall()
		if r.Output[i].Type != "function_call" || fc.ID != want.id || fc.CallID != want.call || fc.Name != want.name || fc.Arguments != want.args || fc.Status != "completed" {
			t.Fatalf("item %d: %+v", i, fc)
		}
	}
	if len(r.Tools) != 2 || r.Tools[0].Name != "get_weather" || r.Tools[1].Description != "Time" || r.ParallelToolCalls {
		t.Fatalf("tools echo %s", raw["tools"])
	}
	if r.ToolChoice.Name != "get_time" || r.ToolChoice.Type != "function" {
		t.Fatalf("tool_choice echo %s", raw["tool_choice"])
	}
	if _, ok := r.JSON.ExtraFields["routing"]; ok {
		t.Fatalf("routing invented: %s", b)
	}
}

func TestFromChatIncompleteAndRefusal(t *testing.T) {
	req := parse(t, `{"input":"Long story","max_output_tokens":3}`)
	tests := []struct {
		name, message, finish, status, reason, text string
		parts                                       []string
	}{
		{"length", `{"role":"assistant","content":"Once upon a"}`, "length", "incomplete", "max_output_tokens", "Once upon a", []string{"output_text"}},
		{"content filter", `{"role":"assistant","content":""}`, "content_filter", "incomplete", "content_filter", "", []string{"output_text"}},
		{"refusal", `{"role":"assistant","content":null,"refusal":"I can't."}`, "stop", "completed", "", "", []string{"refusal"}},
		{"empty reply", `{"role":"assistant","content":""}`, "stop", "completed", "", "", []string{"output_text"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chat := `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":` + tc.message + `,"finish_reason":"` + tc.finish + `"}]}`
			b, err := resp.FromChat([]byte(chat), req, "resp_i", 1700000000)
			if err != nil {
				t.Fatal(err)
			}
			r, raw := official(t, b)
			if string(r.Status) != tc.status || r.IncompleteDetails.Reason != tc.reason || r.OutputText() != tc.text {
				t.Fatalf("%s", b)
			}
			if tc.reason == "" && string(raw["incomplete_details"]) != "null" {
				t.Fatalf("incomplete_details %s", raw["incomplete_details"])
			}
			if string(raw["usage"]) != "null" {
				t.Fatalf("usage invented: %s", raw["usage"])
			}
			msg := r.Output[0].AsMessage()
			var types []string
			for _, c := range msg.Content {
				types = append(types, c.Type)
			}
			if strings.Join(types, ",") != strings.Join(tc.parts, ",") || (tc.status == "incomplete") != (msg.Status == "incomplete") {
				t.Fatalf("message %s", b)
			}
		})
	}
}

func TestFromChatRejectsNonCompletions(t *testing.T) {
	req := parse(t, `{"input":"x"}`)
	for _, body := range []string{`not json`, `{"choices":[]}`, `{"choices":"x"}`} {
		if _, err := resp.FromChat([]byte(body), req, "resp_x", 1); err == nil {
			t.Errorf("FromChat(%s) succeeded", body)
		}
	}
}
