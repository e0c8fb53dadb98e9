package responses_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/responses"
	"github.com/openai/openai-go/shared"

	"github.com/arr-dev/arr/domain"
	resp "github.com/arr-dev/arr/readapi/gateway/responses"
)

// chatOf parses body and returns its chat request decoded.
func chatOf(t testing.TB, body string) map[string]any {
	t.Helper()
	r, err := resp.ParseRequest([]byte(body))
	if err != nil {
		t.Fatalf("ParseRequest(%s): %v", body, err)
	}
	b, err := r.ChatBody()
	if err != nil {
		t.Fatalf("ChatBody: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("chat body %s: %v", b, err)
	}
	return m
}

func decode(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad expectation %s: %v", s, err)
	}
	return v
}

func TestChatBody(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string // the whole chat request
	}{
		{
			name: "string input",
			body: `{"model":"auto","input":"Say hello"}`,
			want: `{"model":"auto","messages":[{"role":"user","content":"Say hello"}]}`,
		},
		{
			name: "no model: auto by omission, as on the chat route",
			body: `{"input":"hi","store":true,"metadata":{"k":"v"}}`,
			want: `{"messages":[{"role":"user","content":"hi"}]}`,
		},
		{
			name: "instructions become the first system message",
			body: `{"model":"small","instructions":"Be terse.","input":[{"role":"user","content":"Hi"}]}`,
			want: `{"model":"small","messages":[{"role":"system","content":"Be terse."},{"role":"user","content":"Hi"}]}`,
		},
		{
			name: "item list with every role and part kind",
			body: `{"input":[
				{"type":"message","role":"developer","content":[{"type":"input_text","text":"Rules."}]},
				{"role":"system","content":"Sys"},
				{"role":"user","content":[{"type":"input_text","text":"Look: "},{"type":"input_image","image_url":"data:image/png;base64,AAAA","detail":"low"},{"type":"input_file","file_data":"JVBER","filename":"a.pdf"}]},
				{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Seen.","annotations":[]}]},
				{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}
			]}`,
			want: `{"messages":[
				{"role":"developer","content":"Rules."},
				{"role":"system","content":"Sys"},
				{"role":"user","content":[{"type":"text","text":"Look: "},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"low"}},{"type":"file","file":{"file_data":"JVBER","filename":"a.pdf"}}]},
				{"role":"assistant","content":"Seen."},
				{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}
			]}`,
		},
		{
			name: "function calls join the assistant message, outputs become tool messages",
			body: `{"model":"auto","input":[
				{"role":"user","content":"Weather and time?"},
				{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"},
				{"type":"function_call","call_id":"call_2","name":"get_time","arguments":"{}"},
				{"type":"function_call_output","call_id":"call_1","output":"sunny"},
				{"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"noon"}]},
				{"type":"reasoning","id":"rs_1","summary":[]}
			],
			"tools":[{"type":"function","name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":true},
			         {"type":"function","name":"get_time","parameters":null}],
			"tool_choice":"required","parallel_tool_calls":true}`,
			want: `{"model":"auto","messages":[
				{"role":"user","content":"Weather and time?"},
				{"role":"assistant","content":null,"tool_calls":[
					{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
					{"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{}"}}]},
				{"role":"tool","content":"sunny","tool_call_id":"call_1"},
				{"role":"tool","content":"noon","tool_call_id":"call_2"}],
			"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}},"strict":true}},
			         {"type":"function","function":{"name":"get_time"}}],
			"tool_choice":"required","parallel_tool_calls":true}`,
		},
		{
			name: "assistant text then a call: one assistant message",
			body: `{"input":[{"role":"user","content":"x"},{"role":"assistant","content":"Let me check."},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"ok"}],"tools":[{"type":"function","name":"f"}]}`,
			want: `{"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"Let me check.","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":"ok","tool_call_id":"c"}],"tools":[{"type":"function","function":{"name":"f"}}]}`,
		},
		{
			name: "function tool_choice and allowed_tools",
			body: `{"input":"x","tools":[{"type":"function","name":"f"},{"type":"function","name":"g"}],"tool_choice":{"type":"function","name":"g"}}`,
			want: `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`,
		},
		{
			name: "allowed_tools",
			body: `{"input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"f"}]}}`,
			want: `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"f"}}]}}}`,
		},
		{
			name: "tool_choice and parallel_tool_calls without tools are not sent (chat refuses them)",
			body: `{"input":"x","tool_choice":"none","parallel_tool_calls":false}`,
			want: `{"messages":[{"role":"user","content":"x"}]}`,
		},
		{
			name: "json_schema format and sampling",
			body: `{"input":"x","text":{"format":{"type":"json_schema","name":"person","schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]},"strict":true},"verbosity":"low"},
				"temperature":0,"top_p":0.5,"max_output_tokens":64,"reasoning":{"effort":"low","summary":"auto"},"user":"u1","safety_identifier":"s1","prompt_cache_key":"p1"}`,
			want: `{"messages":[{"role":"user","content":"x"}],
				"response_format":{"type":"json_schema","json_schema":{"name":"person","schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]},"strict":true}},
				"verbosity":"low","reasoning_effort":"low","temperature":0,"top_p":0.5,"max_completion_tokens":64,"user":"u1","safety_identifier":"s1","prompt_cache_key":"p1"}`,
		},
		{
			name: "json_object and text formats",
			body: `{"input":"x","text":{"format":{"type":"json_object"}}}`,
			want: `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}}`,
		},
		{
			name: "text format is the default and not sent",
			body: `{"input":"x","text":{"format":{"type":"text"}}}`,
			want: `{"messages":[{"role":"user","content":"x"}]}`,
		},
		{
			name: "a stream asks for usage; the routing fields pass as given",
			body: `{"input":"x","stream":true,"stream_options":{"include_obfuscation":false},"quality_floor":0.9,"max_cost_usd":0.01,"brand_pref":"openai"}`,
			want: `{"messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"include_usage":true},"quality_floor":0.9,"max_cost_usd":0.01,"brand_pref":"openai"}`,
		},
		{
			name: "harmless fields are accepted and have no effect",
			body: `{"input":"x","store":false,"background":false,"previous_response_id":null,"service_tier":"flex","truncation":"auto","include":["reasoning.encrypted_content"],"top_logprobs":0,"max_tool_calls":3,"prompt_cache_retention":"24h"}`,
			want: `{"messages":[{"role":"user","content":"x"}]}`,
		},
		{
			name: "instructions alone with an empty item list",
			body: `{"instructions":"Only this.","input":[]}`,
			want: `{"messages":[{"role":"system","content":"Only this."}]}`,
		},
		{
			name: "refusal parts of an assistant message",
			body: `{"input":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"refusal","refusal":"No."}]},{"role":"user","content":"please"}]}`,
			want: `{"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"","refusal":"No."},{"role":"user","content":"please"}]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := chatOf(t, tc.body)
			if want := decode(t, tc.want); !reflect.DeepEqual(any(got), want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Fatalf("chat body\n got %s\nwant %s", g, w)
			}
		})
	}
}

// TestChatBodyKeepsRoutingFieldsRaw: the routing fields go to the chat
// route byte for byte, so it validates them with its own messages.
func TestChatBodyKeepsRoutingFieldsRaw(t *testing.T) {
	r, err := resp.ParseRequest([]byte(`{"input":"x","quality_floor":"high","max_cost_usd":1e-3}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.ChatBody()
	if !strings.HasSuffix(string(b), `,"quality_floor":"high","max_cost_usd":1e-3}`) {
		t.Fatalf("chat body %s", b)
	}
	if !reflect.DeepEqual(resp.ArrFields(), []string{"quality_floor", "max_cost_usd", "brand_pref"}) {
		t.Fatalf("ArrFields %v", resp.ArrFields())
	}
}

func TestParseRequestErrors(t *testing.T) {
	tests := []struct {
		name, body, code, param, says string
	}{
		{"not JSON", `{`, "invalid_json", "", "not valid JSON"},
		{"not an object", `[]`, "invalid_json", "", "JSON object"},
		{"previous_response_id", `{"input":"x","previous_response_id":"resp_1"}`, "unsupported_parameter", "previous_response_id", "does not store responses"},
		{"conversation", `{"input":"x","conversation":"conv_1"}`, "unsupported_parameter", "conversation", "input items"},
		{"stored prompt", `{"prompt":{"id":"pmpt_1"}}`, "unsupported_parameter", "prompt", "instructions"},
		{"background", `{"input":"x","background":true}`, "unsupported_parameter", "background", "background"},
		{"unknown field", `{"input":"x","frobnicate":1}`, "unknown_parameter", "frobnicate", "frobnicate"},
		{"missing input", `{"model":"auto"}`, "missing_input", "input", "input is required"},
		{"empty input", `{"input":[]}`, "empty_input", "input", "must not be empty"},
		{"input a number", `{"input":3}`, "invalid_type", "input", "string or an array"},
		{"model a number", `{"input":"x","model":3}`, "invalid_type", "model", "model must be a string"},
		{"bad role", `{"input":[{"role":"tool","content":"x"}]}`, "invalid_role", "input[0].role", "user, system, developer, assistant"},
		{"no content", `{"input":[{"role":"user"}]}`, "missing_content", "input[0].content", "needs content"},
		{"output_text from the user", `{"input":[{"role":"user","content":[{"type":"output_text","text":"x"}]}]}`, "invalid_value", "input[0].content[0].type", "input_text"},
		{"input_text from the assistant", `{"input":[{"role":"assistant","content":[{"type":"input_text","text":"x"}]}]}`, "invalid_value", "input[0].content[0].type", "output_text or refusal"},
		{"image by file id", `{"input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]}`, "unsupported_value", "input[0].content[0].file_id", "file_id"},
		{"file by id", `{"input":[{"role":"user","content":[{"type":"input_file","file_id":"file-1"}]}]}`, "unsupported_value", "input[0].content[0]", "file_data"},
		{"item_reference", `{"input":[{"type":"item_reference","id":"msg_1"}]}`, "unsupported_value", "input[0].type", "stores no responses"},
		{"hosted tool call item", `{"input":[{"type":"web_search_call","id":"ws_1"}]}`, "unsupported_value", "input[0].type", "web_search_call"},
		{"call without call_id", `{"input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "invalid_value", "input[0].call_id", "call_id"},
		{"call without arguments", `{"input":[{"type":"function_call","call_id":"c","name":"f"}]}`, "invalid_value", "input[0].arguments", "arguments"},
		{"output without its call", `{"input":[{"role":"user","content":"x"},{"type":"function_call_output","call_id":"call_9","output":"ok"}]}`, "invalid_value", "input[1].call_id", "call_9"},
		{"image in a tool output", `{"input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"x"}]}]}`, "unsupported_value", "input[1].output[0].type", "input_text"},
		{"hosted tool", `{"input":"x","tools":[{"type":"web_search_preview"}]}`, "unsupported_tool", "tools[0].type", "function tools only"},
		{"tool without name", `{"input":"x","tools":[{"type":"function"}]}`, "invalid_value", "tools[0].name", "name"},
		{"tool name with a space", `{"input":"x","tools":[{"type":"function","name":"get weather"}]}`, "invalid_value", "tools[0].name", "letters"},
		{"duplicate tool", `{"input":"x","tools":[{"type":"function","name":"f"},{"type":"function","name":"f"}]}`, "invalid_value", "tools[1].name", "unique"},
		{"parameters not an object", `{"input":"x","tools":[{"type":"function","name":"f","parameters":"x"}]}`, "invalid_type", "tools[0].parameters", "JSON Schema"},
		{"required without tools", `{"input":"x","tool_choice":"required"}`, "invalid_value", "tool_choice", "needs tools"},
		{"tool_choice names a missing tool", `{"input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`, "invalid_value", "tool_choice.name", "\"g\""},
		{"hosted tool_choice", `{"input":"x","tool_choice":{"type":"file_search"}}`, "unsupported_tool", "tool_choice.type", "function tools only"},
		{"bad tool_choice string", `{"input":"x","tool_choice":"any"}`, "invalid_value", "tool_choice", "none, auto, required"},
		{"unknown text format", `{"input":"x","text":{"format":{"type":"xml"}}}`, "invalid_value", "text.format.type", "json_schema"},
		{"json_schema without name", `{"input":"x","text":{"format":{"type":"json_schema","schema":{}}}}`, "invalid_value", "text.format.name", "name"},
		{"json_schema without schema", `{"input":"x","text":{"format":{"type":"json_schema","name":"n"}}}`, "invalid_value", "text.format.schema", "schema"},
		{"unknown text key", `{"input":"x","text":{"style":"x"}}`, "unknown_parameter", "text.style", "format and verbosity"},
		{"bad verbosity", `{"input":"x","text":{"verbosity":"loud"}}`, "invalid_value", "text.verbosity", "low, medium or high"},
		{"temperature", `{"input":"x","temperature":3}`, "invalid_value", "temperature", "0 to 2"},
		{"top_p", `{"input":"x","top_p":-1}`, "invalid_value", "top_p", "0 to 1"},
		{"max_output_tokens", `{"input":"x","max_output_tokens":0}`, "invalid_value", "max_output_tokens", "at least 1"},
		{"stream", `{"input":"x","stream":"yes"}`, "invalid_type", "stream", "boolean"},
		{"store", `{"input":"x","store":"yes"}`, "invalid_type", "store", "boolean"},
		{"metadata value", `{"input":"x","metadata":{"k":1}}`, "invalid_type", "metadata.k", "strings"},
		{"metadata too long", `{"input":"x","metadata":{"k":"` + strings.Repeat("v", 513) + `"}}`, "invalid_value", "metadata.k", "512"},
		{"logprobs", `{"input":"x","top_logprobs":5}`, "unsupported_parameter", "top_logprobs", "chat/completions"},
		{"logprobs include", `{"input":"x","include":["message.output_text.logprobs"]}`, "unsupported_parameter", "include[0]", "logprobs"},
		{"reasoning effort", `{"input":"x","reasoning":{"effort":"max"}}`, "invalid_value", "reasoning.effort", "low"},
		{"truncation", `{"input":"x","truncation":"middle"}`, "invalid_value", "truncation", "auto or disabled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resp.ParseRequest([]byte(tc.body))
			var de *domain.Error
			if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("err %v, want a domain.Invalid", err)
			}
			if de.Code != tc.code || de.Field != tc.param || !strings.Contains(de.Message, tc.says) {
				t.Fatalf("got code %q param %q message %q; want %q %q containing %q", de.Code, de.Field, de.Message, tc.code, tc.param, tc.says)
			}
		})
	}
}

// TestParsesOfficialGoClientBodies: the request bodies openai-go builds
// for responses.ResponseNewParams parse and translate.
func TestParsesOfficialGoClientBodies(t *testing.T) {
	params := responses.ResponseNewParams{
		Model:        "auto",
		Instructions: openai.String("Answer briefly."),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("What is the weather in Paris?", responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfFunctionCall(`{"city":"Paris"}`, "call_1", "get_weather"),
			responses.ResponseInputItemParamOfFunctionCallOutput("call_1", "sunny"),
			responses.ResponseInputItemParamOfOutputMessage([]responses.ResponseOutputMessageContentUnionParam{{
				OfOutputText: &responses.ResponseOutputTextParam{Text: "It is sunny.", Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}},
			}}, "msg_1", responses.ResponseOutputMessageStatusCompleted),
			responses.ResponseInputItemParamOfMessage("Thanks", responses.EasyInputMessageRoleUser),
		}},
		Tools: []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather",
			map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}, true)},
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "weather", Schema: map[string]any{"type": "object"}},
		}},
		MaxOutputTokens: openai.Int(100),
		Temperature:     openai.Float(0.2),
		Store:           openai.Bool(true),
		Metadata:        shared.Metadata{"trace": "t1"},
	}
	body, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	got := chatOf(t, string(body))
	msgs := got["messages"].([]any)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,assistant,user" {
		t.Fatalf("roles %v in %s", roles, body)
	}
	if got["max_completion_tokens"] != 100.0 || got["temperature"] != 0.2 || got["response_format"].(map[string]any)["type"] != "json_schema" {
		t.Fatalf("chat body %v", got)
	}
	if len(got["tools"].([]any)) != 1 {
		t.Fatalf("tools %v", got["tools"])
	}
}
