package messages_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/gateway/messages"
)

func chatOf(t *testing.T, body string) map[string]any {
	t.Helper()
	r, err := messages.ParseRequest([]byte(body))
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	b, err := r.ChatBody()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("chat body %s: %v", b, err)
	}
	return m
}

func TestChatBodyTranslatesAConversation(t *testing.T) {
	m := chatOf(t, `{"model":"claude-sonnet-4-5","max_tokens":1024,"system":[{"type":"text","text":"A"},{"type":"text","text":"B","cache_control":{"type":"ephemeral"}}],
		"stream":true,"temperature":0.5,"top_k":5,"thinking":{"type":"enabled","budget_tokens":2000},"stop_sequences":["END"],"metadata":{"user_id":"u"},"quality_floor":0.9,
		"tools":[{"name":"read","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}},"cache_control":{"type":"ephemeral"}},{"name":"later","input_schema":{"type":"object"},"defer_loading":true}],
		"tool_choice":{"type":"tool","name":"read","disable_parallel_tool_use":true},
		"messages":[
		 {"role":"user","content":"Read a.txt"},
		 {"role":"system","content":[{"type":"text","text":"Mind the path."}]},
		 {"role":"assistant","content":[{"type":"thinking","thinking":"...","signature":"x"},{"type":"text","text":"Reading."},{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a.txt"}}]},
		 {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"hello"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAA="}}]},{"type":"text","text":"And now?"}]}]}`)
	want := `{"model":"claude-sonnet-4-5","messages":[{"role":"system","content":"A\n\nB"},{"role":"user","content":"Read a.txt"},{"role":"system","content":"Mind the path."},` +
		`{"role":"assistant","content":"Reading.","tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.txt\"}"}}]},` +
		`{"role":"tool","content":"hello","tool_call_id":"toolu_1"},` +
		`{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAA="}},{"type":"text","text":"And now?"}]}],` +
		`"tools":[{"type":"function","function":{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}],` +
		`"tool_choice":{"function":{"name":"read"},"type":"function"},"parallel_tool_calls":false,"stop":["END"],"temperature":0.5,"max_completion_tokens":1024,` +
		`"stream":true,"stream_options":{"include_usage":true},"user":"u","quality_floor":0.9}`
	got, _ := json.Marshal(m)
	var w map[string]any
	_ = json.Unmarshal([]byte(want), &w)
	wb, _ := json.Marshal(w)
	if string(got) != string(wb) {
		t.Fatalf("chat body\n got %s\nwant %s", got, wb)
	}
}

func TestParseRequestRefuses(t *testing.T) {
	for _, tc := range []struct{ body, code, param string }{
		{`[]`, "invalid_json", ""},
		{`{"messages":[{"role":"user","content":"x"}]}`, "missing_max_tokens", "max_tokens"},
		{`{"max_tokens":0,"messages":[{"role":"user","content":"x"}]}`, "invalid_value", "max_tokens"},
		{`{"max_tokens":5}`, "missing_messages", "messages"},
		{`{"max_tokens":5,"messages":[]}`, "empty_messages", "messages"},
		{`{"max_tokens":5,"messages":[{"role":"user","content":"x"}],"n":2}`, "unknown_field", "n"},
		{`{"max_tokens":5,"messages":[{"role":"user","content":"x"}],"temperature":1.5}`, "invalid_value", "temperature"},
		{`{"max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]}]}`, "invalid_value", "messages[0].content[0].tool_use_id"},
		{`{"max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]}`, "unsupported_value", "messages[0].content[0].source.type"},
		{`{"max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"bash_20250124","name":"bash"}]}`, "unsupported_value", "tools[0].type"},
		{`{"max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"a","input_schema":{}}],"tool_choice":{"type":"tool","name":"b"}}`, "invalid_value", "tool_choice.name"},
		{`{"max_tokens":5,"messages":[{"role":"user","content":"x"}],"mcp_servers":[{"type":"url","url":"https://x"}]}`, "unsupported_value", "mcp_servers"},
	} {
		_, err := messages.ParseRequest([]byte(tc.body))
		var de *domain.Error
		if !errors.As(err, &de) || de.Kind != domain.ErrInvalid || de.Code != tc.code || de.Field != tc.param {
			t.Errorf("%s: %v, want %s at %q", tc.body, err, tc.code, tc.param)
		}
	}
	if _, err := messages.ParseCountRequest([]byte(`{"model":"x","messages":[{"role":"user","content":"x"}]}`)); err != nil {
		t.Errorf("count_tokens without max_tokens: %v", err)
	}
}

func TestFromChat(t *testing.T) {
	chat := `{"id":"c","model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"Let me <check>.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\": \"a\"}"}}]},"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":30,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":10}},"routing":{"tier":"mid"}}`
	b, err := messages.FromChat([]byte(chat), "msg_1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"msg_1","type":"message","role":"assistant","model":"gpt-x","content":[{"type":"text","text":"Let me <check>."},{"type":"tool_use","id":"call_1","name":"read","input":{"path":"a"}}],` +
		`"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":10,"output_tokens":7,"service_tier":"standard"},"routing":{"tier":"mid"}}`
	if string(b) != want {
		t.Fatalf("message\n got %s\nwant %s", b, want)
	}
	b, err = messages.FromChat([]byte(`{"model":"m","choices":[{"index":0,"message":{"content":"cut"},"finish_reason":"length"}]}`), "msg_2", 12, 3)
	if err != nil || !strings.Contains(string(b), `"stop_reason":"max_tokens"`) || !strings.Contains(string(b), `"input_tokens":12,`) || !strings.Contains(string(b), `"output_tokens":3,`) {
		t.Fatalf("length, usage counted by the gateway: %s %v", b, err)
	}
	if _, err := messages.FromChat([]byte(`{"choices":[{"message":{"tool_calls":[{"function":{"name":"f","arguments":"[1]"}}]}}]}`), "m", 0, 0); err == nil {
		t.Fatal("tool arguments that are not an object were accepted")
	}
}

func TestStreamEvents(t *testing.T) {
	s := messages.NewStream("msg_s", "auto")
	var got []string
	feed := func(chunk string) {
		evs, err := s.Chunk([]byte(chunk))
		if err != nil {
			t.Fatalf("%s: %v", chunk, err)
		}
		for _, e := range evs {
			got = append(got, e.Type+" "+string(e.Data))
		}
	}
	feed(`{"model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)
	feed(`{"model":"gpt-x","choices":[{"index":0,"delta":{"content":"Hi"}}]}`)
	feed(`{"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}`)
	feed(`{"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":"}}]}}]}`)
	feed(`{"model":"gpt-x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`)
	feed(`{"model":"gpt-x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)
	feed(`{"model":"gpt-x","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4},"routing":{"tier":"nano"}}`)
	for _, e := range s.Finish() {
		got = append(got, e.Type+" "+string(e.Data))
	}
	want := []string{
		`message_start {"message":{"id":"msg_s","type":"message","role":"assistant","model":"gpt-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0,"service_tier":"standard"}},"type":"message_start"}`,
		`ping {"type":"ping"}`,
		`content_block_start {"content_block":{"type":"text","text":""},"index":0,"type":"content_block_start"}`,
		`content_block_delta {"delta":{"text":"Hi","type":"text_delta"},"index":0,"type":"content_block_delta"}`,
		`content_block_stop {"index":0,"type":"content_block_stop"}`,
		`content_block_start {"content_block":{"type":"tool_use","id":"call_1","name":"f","input":{}},"index":1,"type":"content_block_start"}`,
		`content_block_delta {"delta":{"partial_json":"{\"a\":","type":"input_json_delta"},"index":1,"type":"content_block_delta"}`,
		`content_block_delta {"delta":{"partial_json":"1}","type":"input_json_delta"},"index":1,"type":"content_block_delta"}`,
		`content_block_stop {"index":1,"type":"content_block_stop"}`,
		`message_delta {"delta":{"stop_reason":"tool_use","stop_sequence":null},"routing":{"tier":"nano"},"type":"message_delta","usage":{"input_tokens":9,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":4,"service_tier":"standard"}}`,
		`message_stop {"type":"message_stop"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if evs := s.Fail("api_error", "x", "late"); evs != nil {
		t.Fatalf("Fail after Finish: %v", evs)
	}
	cut := messages.NewStream("msg_c", "auto")
	evs := cut.Fail("api_error", "upstream_stream_cut", "cut")
	if len(evs) != 1 || evs[0].Type != "error" || string(evs[0].Data) != `{"error":{"code":"upstream_stream_cut","message":"cut","type":"api_error"},"type":"error"}` {
		t.Fatalf("fail: %v", evs)
	}
}

func TestErrorBody(t *testing.T) {
	b := messages.ErrorBody(429, "budget_exceeded", "over budget", "", "req-1")
	if string(b) != `{"error":{"code":"budget_exceeded","message":"over budget","type":"rate_limit_error"},"request_id":"req-1","type":"error"}` {
		t.Fatalf("%s", b)
	}
	for status, typ := range map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
		413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 502: "api_error", 503: "overloaded_error", 504: "timeout_error"} {
		if got := messages.ErrorType(status); got != typ {
			t.Errorf("ErrorType(%d) = %s, want %s", status, got, typ)
		}
	}
}
