package gemini_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/gemini"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/chat"
)

// TestRequestRefusals: what Gemini cannot be told is the client's 400
// (domain.ErrInvalid) naming the field, before anything goes out.
func TestRequestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, body, field string
	}{
		{"unknown tool call", `{"messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"call_9","content":"r"}]}`, "messages[1].tool_call_id"},
		{"arguments not an object", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, "messages[0].tool_calls[0].function.arguments"},
		{"data URL not base64", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png,abc"}}]}]}`, "messages[0].content[0].image_url.url"},
		{"image URL of unknown type", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://127.0.0.1/img?id=3"}}]}]}`, "messages[0].content[0].image_url.url"},
		{"file not inline", `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"JVBER"}}]}]}`, "messages[0].content[0].file.file_data"},
		{"unknown role", `{"messages":[{"role":"function","content":"x"}]}`, "messages[0].role"},
		{"image from the assistant", `{"messages":[{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}]}`, "messages[0].content[0]"},
		{"custom tool", `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"custom","function":{"name":"f"}}]}`, "tools"},
		{"tool_choice unknown", `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"sometimes"}`, "tool_choice"},
		{"response_format unknown", `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"grammar"}}`, "response_format.type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r chat.Request
			if err := json.Unmarshal([]byte(tc.body), &r); err != nil {
				t.Fatal(err)
			}
			out, err := gemini.Request(&r)
			var de *domain.Error
			if !errors.Is(err, domain.ErrInvalid) || !errors.As(err, &de) || de.Field != tc.field {
				t.Fatalf("got %s, %v; want a refusal of %s", out, err, tc.field)
			}
		})
	}
}

// TestRequestTyped: a request a dialect built in Go (typed parts, a
// NamedToolChoice) translates as its JSON form does.
func TestRequestTyped(t *testing.T) {
	desc := "d"
	r := &chat.Request{Messages: []chat.Message{{Role: "user", Content: []chat.Part{chat.TextPart("hi"), {Type: "image_url", ImageURL: &chat.ImageURL{URL: "data:image/webp;base64,UklGRg=="}}}}},
		Tools:      []chat.Tool{{Type: "function", Function: chat.Function{Name: "f", Description: &desc, Parameters: json.RawMessage(`{"type":"object"}`)}}},
		ToolChoice: chat.NamedToolChoice{Type: "function", Function: chat.FunctionName{Name: "f"}}}
	out, err := gemini.Request(r)
	want := `{"contents":[{"role":"user","parts":[{"text":"hi"},{"inlineData":{"mimeType":"image/webp","data":"UklGRg=="}}]}],` +
		`"tools":[{"functionDeclarations":[{"name":"f","description":"d","parametersJsonSchema":{"type":"object"}}]}],` +
		`"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f"]}}}`
	if err != nil || string(out) != want {
		t.Fatalf("got %s (%v)\nwant %s", out, err, want)
	}
}

// TestErrors: Google's error body is read (status, reason) and told in
// OpenAI's shape; a body that is not Google's is told by its status.
func TestErrors(t *testing.T) {
	body := []byte(`{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}`)
	e, ok := gemini.ParseError(body)
	if !ok || e.Code != 400 || e.Status != "INVALID_ARGUMENT" || e.Reason != "API_KEY_INVALID" || e.Message != "API key not valid." {
		t.Fatalf("ParseError = %+v, %v", e, ok)
	}
	if e, ok := gemini.ParseError([]byte(`[{"error":{"code":429,"message":"Quota","status":"RESOURCE_EXHAUSTED"}}]`)); !ok || e.Status != "RESOURCE_EXHAUSTED" {
		t.Fatalf("Vertex AI's list of one: %+v, %v", e, ok)
	}
	if _, ok := gemini.ParseError([]byte(`<html>`)); ok {
		t.Fatal("HTML read as an error body")
	}
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"google 400", 400, string(body), `{"error":{"code":"invalid_argument","message":"API key not valid.","param":null,"type":"invalid_request_error"}}`},
		{"google 429", 429, `{"error":{"code":429,"message":"Quota","status":"RESOURCE_EXHAUSTED"}}`, `{"error":{"code":"resource_exhausted","message":"Quota","param":null,"type":"rate_limit_error"}}`},
		{"not google's", 503, `upstream connect error`, `{"error":{"code":null,"message":"Service Unavailable","param":null,"type":"server_error"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(gemini.ChatError(tc.status, []byte(tc.body))); got != tc.want {
				t.Fatalf("got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestStreamErrorEvent: an error event fails the stream's translation.
func TestStreamErrorEvent(t *testing.T) {
	s := gemini.NewStream("m", 1)
	if _, err := s.Event([]byte(`{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`)); err != nil {
		t.Fatal(err)
	}
	_, err := s.Event([]byte(`{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`))
	if !errors.Is(err, gemini.ErrStreamEvent) || s.Done() {
		t.Fatalf("err = %v, done %v", err, s.Done())
	}
	if _, err := gemini.Completion([]byte(`{"usageMetadata":{}}`), "m", 1); !errors.Is(err, gemini.ErrNoCandidates) {
		t.Fatalf("a reply with no candidates: %v", err)
	}
}
