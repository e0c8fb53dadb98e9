package anthropic_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/anthropic"
	"github.com/arr-dev/arr/domain"
)

// messagesOf translates body and returns the Messages request as a map.
func messagesOf(t *testing.T, body string, o anthropic.Options) map[string]any {
	t.Helper()
	tr, err := anthropic.Request([]byte(body), o)
	if err != nil {
		t.Fatalf("Request(%s): %v", body, err)
	}
	var m map[string]any
	if err := json.Unmarshal(tr.Body, &m); err != nil {
		t.Fatalf("%s: %v", tr.Body, err)
	}
	return m
}

func compact(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const user = `"messages":[{"role":"user","content":"hi"}]`

// TestRequestMappings pins one field's translation per case: the
// Messages field and its value (absent: "").
func TestRequestMappings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		body  string
		o     anthropic.Options
		field string
		want  string
	}{
		{"max_completion_tokens wins", `{"model":"m",` + user + `,"max_completion_tokens":10,"max_tokens":20}`, anthropic.Options{}, "max_tokens", `10`},
		{"max_tokens", `{"model":"m",` + user + `,"max_tokens":20}`, anthropic.Options{}, "max_tokens", `20`},
		{"max tokens cut to the model's", `{"model":"m",` + user + `,"max_tokens":20000}`, anthropic.Options{MaxTokens: 8192}, "max_tokens", `8192`},
		{"default: the model's limit", `{"model":"m",` + user + `}`, anthropic.Options{MaxTokens: 64000}, "max_tokens", `64000`},
		{"default without a limit", `{"model":"m",` + user + `}`, anthropic.Options{}, "max_tokens", `4096`},
		{"huge max_tokens without a limit", `{"model":"m",` + user + `,"max_tokens":9223372036854775807}`, anthropic.Options{}, "max_tokens", `128000`},
		{"reasoning off in a tool loop", `{"model":"m","max_tokens":8000,"reasoning_effort":"high","temperature":0.5,"messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"1"}]}`, anthropic.Options{}, "thinking", ``},
		{"reasoning after a tool loop ended", `{"model":"m","max_tokens":8000,"reasoning_effort":"low","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"1"},{"role":"assistant","content":"done"},{"role":"user","content":"b"}]}`, anthropic.Options{}, "thinking", `{"budget_tokens":1024,"type":"enabled"}`},
		{"stop string", `{"model":"m",` + user + `,"stop":"x"}`, anthropic.Options{}, "stop_sequences", `["x"]`},
		{"stop null", `{"model":"m",` + user + `,"stop":null}`, anthropic.Options{}, "stop_sequences", ``},
		{"tool_choice auto", `{"model":"m",` + user + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto"}`, anthropic.Options{}, "tool_choice", `{"type":"auto"}`},
		{"tool_choice none", `{"model":"m",` + user + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"none","parallel_tool_calls":false}`, anthropic.Options{}, "tool_choice", `{"type":"none"}`},
		{"tool_choice required", `{"model":"m",` + user + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"}`, anthropic.Options{}, "tool_choice", `{"type":"any"}`},
		{"tool_choice named", `{"model":"m",` + user + `,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`, anthropic.Options{}, "tool_choice", `{"name":"f","type":"tool"}`},
		{"parallel false alone", `{"model":"m",` + user + `,"tools":[{"type":"function","function":{"name":"f"}}],"parallel_tool_calls":false}`, anthropic.Options{}, "tool_choice", `{"disable_parallel_tool_use":true,"type":"auto"}`},
		{"tool_choice auto without tools dropped", `{"model":"m",` + user + `,"tool_choice":"auto"}`, anthropic.Options{}, "tool_choice", ``},
		{"user", `{"model":"m",` + user + `,"user":"u1","safety_identifier":"s1"}`, anthropic.Options{}, "metadata", `{"user_id":"u1"}`},
		{"safety_identifier", `{"model":"m",` + user + `,"safety_identifier":"s1"}`, anthropic.Options{}, "metadata", `{"user_id":"s1"}`},
		{"reasoning low", `{"model":"m",` + user + `,"reasoning_effort":"low","max_tokens":4000}`, anthropic.Options{}, "thinking", `{"budget_tokens":1024,"type":"enabled"}`},
		{"reasoning high, half of max_tokens", `{"model":"m",` + user + `,"reasoning_effort":"high","max_tokens":10000}`, anthropic.Options{}, "thinking", `{"budget_tokens":5000,"type":"enabled"}`},
		{"reasoning at least 1024", `{"model":"m",` + user + `,"reasoning_effort":"medium","max_tokens":1500}`, anthropic.Options{}, "thinking", `{"budget_tokens":1024,"type":"enabled"}`},
		{"reasoning none", `{"model":"m",` + user + `,"reasoning_effort":"none"}`, anthropic.Options{}, "thinking", ``},
		{"reasoning with temperature 1", `{"model":"m",` + user + `,"reasoning_effort":"low","temperature":1}`, anthropic.Options{}, "thinking", `{"budget_tokens":1024,"type":"enabled"}`},
		{"response_format text", `{"model":"m",` + user + `,"response_format":{"type":"text"}}`, anthropic.Options{}, "output_config", ``},
		{"prompt_cache_key", `{"model":"m",` + user + `,"prompt_cache_key":"k"}`, anthropic.Options{}, "cache_control", `{"type":"ephemeral"}`},
		{"Options.Cache", `{"model":"m",` + user + `}`, anthropic.Options{Cache: true}, "cache_control", `{"type":"ephemeral"}`},
		{"no cache asked", `{"model":"m",` + user + `}`, anthropic.Options{}, "cache_control", ``},
		{"stream false", `{"model":"m",` + user + `,"stream":false}`, anthropic.Options{}, "stream", ``},
		{"neutral values accepted", `{"model":"m",` + user + `,"n":1,"logprobs":false,"frequency_penalty":0.0,"presence_penalty":0,"logit_bias":{},"metadata":{},"service_tier":"auto","modalities":["text"],"seed":null,"top_logprobs":0}`, anthropic.Options{}, "model", `"m"`},
		{"user string content", `{"model":"m",` + user + `}`, anthropic.Options{}, "messages", `[{"content":[{"text":"hi","type":"text"}],"role":"user"}]`},
		{"assistant refusal as text", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null,"refusal":"no"}]}`, anthropic.Options{}, "messages",
			`[{"content":[{"text":"a","type":"text"}],"role":"user"},{"content":[{"text":"no","type":"text"}],"role":"assistant"}]`},
		{"name ignored", `{"model":"m","messages":[{"role":"user","name":"ann","content":"a"}]}`, anthropic.Options{}, "messages", `[{"content":[{"text":"a","type":"text"}],"role":"user"}]`},
		{"empty system left out", `{"model":"m","messages":[{"role":"system","content":""},{"role":"user","content":"a"}]}`, anthropic.Options{}, "system", ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := messagesOf(t, tc.body, tc.o)
			v, ok := m[tc.field]
			got := ""
			if ok {
				got = compact(t, v)
			}
			if got != tc.want {
				t.Errorf("%s = %s, want %s", tc.field, got, tc.want)
			}
		})
	}
}

// TestRequestRefusals: what Anthropic cannot do is refused with a 400
// (domain.ErrInvalid) naming the field.
func TestRequestRefusals(t *testing.T) {
	tools := `"tools":[{"type":"function","function":{"name":"f"}}]`
	for _, tc := range []struct {
		name, body, code, field string
	}{
		{"not JSON", `{`, "invalid_json", ""},
		{"not an object", `[]`, "invalid_json", ""},
		{"unknown field", `{"model":"m",` + user + `,"frobnicate":1}`, "unknown_field", "frobnicate"},
		{"n above 1", `{"model":"m",` + user + `,"n":2}`, "unsupported_parameter", "n"},
		{"logprobs", `{"model":"m",` + user + `,"logprobs":true}`, "unsupported_parameter", "logprobs"},
		{"top_logprobs", `{"model":"m",` + user + `,"top_logprobs":3}`, "unsupported_parameter", "top_logprobs"},
		{"seed", `{"model":"m",` + user + `,"seed":7}`, "unsupported_parameter", "seed"},
		{"frequency_penalty", `{"model":"m",` + user + `,"frequency_penalty":0.5}`, "unsupported_parameter", "frequency_penalty"},
		{"audio", `{"model":"m",` + user + `,"audio":{"voice":"x"}}`, "unsupported_parameter", "audio"},
		{"functions", `{"model":"m",` + user + `,"functions":[]}`, "unsupported_parameter", "functions"},
		{"no model", `{` + user + `}`, "missing_model", "model"},
		{"no messages", `{"model":"m","messages":[]}`, "empty_messages", "messages"},
		{"empty user content", `{"model":"m","messages":[{"role":"user","content":""}]}`, "empty_content", "messages[0].content"},
		{"empty assistant content before the last", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":""},{"role":"user","content":"b"}]}`, "empty_content", "messages[1].content"},
		{"a null alias of max_tokens", `{"model":"m",` + user + `,"max_tokens":100,"max_to\u212Aens":null}`, "unknown_field", "max_to\u212Aens"},
		{"a null unknown field", `{"model":"m",` + user + `,"frobnicate":null}`, "unknown_field", "frobnicate"},
		{"a field in another case", `{"model":"m",` + user + `,"Temperature":0.5}`, "unknown_field", "Temperature"},
		{"stream_options not an object", `{"model":"m",` + user + `,"stream":true,"stream_options":[]}`, "invalid_type", "stream_options"},
		{"a tool call id twice", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"1"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "duplicate_tool_call_id", "messages[3].tool_calls[0].id"},
		{"a tool call answered twice", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"1"},{"role":"tool","tool_call_id":"c","content":"2"}]}`, "duplicate_tool_call_id", "messages[3].tool_call_id"},
		{"image data not base64", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,not base64!"}}]}]}`, "invalid_value", "messages[0].content[0].image_url.url"},
		{"image data badly padded", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAA"}}]}]}`, "invalid_value", "messages[0].content[0].image_url.url"},
		{"PDF data not base64", `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"data:application/pdf;base64,%%%%"}}]}]}`, "invalid_value", "messages[0].content[0].file.file_data"},
		{"wrong type", `{"model":"m",` + user + `,"temperature":"hot"}`, "invalid_type", "temperature"},
		{"temperature above 1", `{"model":"m",` + user + `,"temperature":1.5}`, "unsupported_value", "temperature"},
		{"max_tokens 0", `{"model":"m",` + user + `,"max_tokens":0}`, "invalid_value", "max_tokens"},
		{"blank stop", `{"model":"m",` + user + `,"stop":["a"," "]}`, "invalid_value", "stop[1]"},
		{"unknown message field", `{"model":"m","messages":[{"role":"user","content":"a","audio":{}}]}`, "unknown_field", "messages[0].audio"},
		{"function role", `{"model":"m","messages":[{"role":"function","content":"a"}]}`, "unsupported_value", "messages[0].role"},
		{"bad role", `{"model":"m","messages":[{"role":"robot","content":"a"}]}`, "invalid_role", "messages[0].role"},
		{"invalid arguments", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{not json"}}]}]}`, "invalid_tool_arguments", "messages[1].tool_calls[0].function.arguments"},
		{"arguments not an object", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, "invalid_tool_arguments", "messages[1].tool_calls[0].function.arguments"},
		{"tool call without id", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "invalid_value", "messages[1].tool_calls[0]"},
		{"tool result without call", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"tool","tool_call_id":"c9","content":"x"}]}`, "invalid_value", "messages[1].tool_call_id"},
		{"audio part", `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"x","format":"wav"}}]}]}`, "unsupported_value", "messages[0].content[0].type"},
		{"image media type", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/bmp;base64,AA=="}}]}]}`, "unsupported_value", "messages[0].content[0].image_url.url"},
		{"image scheme", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"file:///etc/passwd"}}]}]}`, "invalid_value", "messages[0].content[0].image_url.url"},
		{"non-PDF file", `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"data:text/csv;base64,AA=="}}]}]}`, "unsupported_value", "messages[0].content[0].file.file_data"},
		{"file id", `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-1"}}]}]}`, "unsupported_value", "messages[0].content[0].file"},
		{"image in a system message", `{"model":"m","messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"https://127.0.0.1/a.png"}}]},{"role":"user","content":"a"}]}`, "unsupported_value", "messages[0].content[0].type"},
		{"custom tool", `{"model":"m",` + user + `,"tools":[{"type":"custom","custom":{"name":"x"}}]}`, "unsupported_value", "tools[0].type"},
		{"duplicate tool", `{"model":"m",` + user + `,"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"f"}}]}`, "invalid_value", "tools[1].function.name"},
		{"bad tool_choice", `{"model":"m",` + user + `,` + tools + `,"tool_choice":"always"}`, "invalid_value", "tool_choice"},
		{"allowed_tools", `{"model":"m",` + user + `,` + tools + `,"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}}}`, "unsupported_value", "tool_choice"},
		{"named tool not offered", `{"model":"m",` + user + `,` + tools + `,"tool_choice":{"type":"function","function":{"name":"g"}}}`, "invalid_value", "tool_choice.function.name"},
		{"required without tools", `{"model":"m",` + user + `,"tool_choice":"required"}`, "invalid_value", "tool_choice"},
		{"json_object", `{"model":"m",` + user + `,"response_format":{"type":"json_object"}}`, "unsupported_value", "response_format.type"},
		{"json_schema without schema", `{"model":"m",` + user + `,"response_format":{"type":"json_schema","json_schema":{"name":"x"}}}`, "invalid_value", "response_format.json_schema.schema"},
		{"bad reasoning_effort", `{"model":"m",` + user + `,"reasoning_effort":"extreme"}`, "invalid_value", "reasoning_effort"},
		{"reasoning with small max_tokens", `{"model":"m",` + user + `,"reasoning_effort":"low","max_tokens":1024}`, "invalid_value", "reasoning_effort"},
		{"reasoning with temperature", `{"model":"m",` + user + `,"reasoning_effort":"low","temperature":0.2}`, "unsupported_value", "temperature"},
		{"reasoning with top_p", `{"model":"m",` + user + `,"reasoning_effort":"low","top_p":0.5}`, "unsupported_value", "top_p"},
		{"reasoning with a forced tool", `{"model":"m",` + user + `,` + tools + `,"tool_choice":"required","reasoning_effort":"low"}`, "unsupported_value", "tool_choice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := anthropic.Request([]byte(tc.body), anthropic.Options{MaxTokens: 8192})
			var de *domain.Error
			if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("err = %v, want a domain.ErrInvalid", err)
			}
			if de.Code != tc.code || de.Field != tc.field {
				t.Errorf("code %q field %q (%s), want %q %q", de.Code, de.Field, de.Message, tc.code, tc.field)
			}
			if de.Message == "" {
				t.Error("no message")
			}
		})
	}
}

// TestRequestStreamFlags: Translated says whether the request streams
// and asked for the usage chunk.
func TestRequestStreamFlags(t *testing.T) {
	for _, tc := range []struct {
		body          string
		stream, usage bool
	}{
		{`{"model":"m",` + user + `}`, false, false},
		{`{"model":"m",` + user + `,"stream":true}`, true, false},
		{`{"model":"m",` + user + `,"stream":true,"stream_options":{"include_usage":true}}`, true, true},
		{`{"model":"m",` + user + `,"stream_options":{"include_usage":true}}`, false, false},
	} {
		tr, err := anthropic.Request([]byte(tc.body), anthropic.Options{})
		if err != nil || tr.Stream != tc.stream || tr.IncludeUsage != tc.usage {
			t.Errorf("%s: stream %v usage %v (%v)", tc.body, tr.Stream, tr.IncludeUsage, err)
		}
	}
}

// TestEmptyTextPartsLeftOut: Anthropic refuses empty text blocks, so an
// empty text part is left out.
func TestEmptyTextPartsLeftOut(t *testing.T) {
	m := messagesOf(t, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":""},{"type":"text","text":"a"}]}]}`, anthropic.Options{})
	if got := compact(t, m["messages"]); got != `[{"content":[{"text":"a","type":"text"}],"role":"user"}]` {
		t.Errorf("messages %s", got)
	}
}
