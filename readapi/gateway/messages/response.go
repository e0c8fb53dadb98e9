package messages

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/arr-dev/arr/domain/chat"
)

// message is a Message object.
type message struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []any           `json:"content"`
	StopReason   *string         `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        usage           `json:"usage"`
	Routing      json.RawMessage `json:"routing,omitempty"`
}

// usage is Anthropic's usage: input_tokens are the prompt tokens not read
// from the upstream's prompt cache, cache_read_input_tokens those that
// were (chat's prompt_tokens_details.cached_tokens).
type usage struct {
	InputTokens              int64  `json:"input_tokens"`
	CacheCreationInputTokens int64  `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64  `json:"cache_read_input_tokens"`
	OutputTokens             int64  `json:"output_tokens"`
	ServiceTier              string `json:"service_tier,omitempty"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// usageOf is a chat usage in Anthropic's fields.
func usageOf(u *chat.Usage) usage {
	if u == nil {
		return usage{ServiceTier: "standard"}
	}
	var cached int64
	if u.PromptTokensDetails != nil {
		cached = min(u.PromptTokensDetails.CachedTokens, u.PromptTokens)
	}
	return usage{InputTokens: u.PromptTokens - cached, CacheReadInputTokens: cached, OutputTokens: u.CompletionTokens, ServiceTier: "standard"}
}

// StopReason maps a chat finish_reason to Anthropic's stop_reason.
func StopReason(finish string) string {
	switch finish {
	case "length":
		return "max_tokens"
	case "tool_calls", "function_call":
		return "tool_use"
	case "content_filter":
		return "refusal"
	}
	return "end_turn"
}

// FromChat turns a chat completion (with the gateway's routing object) into
// the Message with id: a text block (the text, or the refusal), then a
// tool_use block per tool call; the stop reason, the usage in Anthropic's
// fields and the routing object. A reply without usage gets prompt and
// completion (what the gateway counted and recorded for it).
func FromChat(completion []byte, id string, prompt, completionTokens int64) ([]byte, error) {
	cc, ch, err := chat.ReadCompletion(completion)
	if err != nil {
		return nil, err
	}
	if cc.Usage == nil {
		cc.Usage = &chat.Usage{PromptTokens: prompt, CompletionTokens: completionTokens}
	}
	stop := StopReason(ch.FinishReason)
	m := message{ID: id, Type: "message", Role: "assistant", Model: cc.Model, Content: []any{}, StopReason: &stop,
		Usage: usageOf(cc.Usage), Routing: cc.Routing}
	text := ""
	if ch.Message.Content != nil {
		text = *ch.Message.Content
	}
	if text == "" && ch.Message.Refusal != nil {
		text = *ch.Message.Refusal
		if ch.FinishReason == "stop" {
			*m.StopReason = "refusal"
		}
	}
	if text != "" || len(ch.Message.ToolCalls) == 0 {
		m.Content = append(m.Content, textBlock{Type: "text", Text: text})
	}
	for i, tc := range ch.Message.ToolCalls {
		input, err := toolInput(tc.Function.Arguments)
		if err != nil {
			return nil, fmt.Errorf("tool call %d: %w", i, err)
		}
		callID := tc.ID
		if callID == "" {
			callID = fmt.Sprintf("toolu_%s_%d", id, i)
		}
		m.Content = append(m.Content, toolUseBlock{Type: "tool_use", ID: callID, Name: tc.Function.Name, Input: input})
	}
	return marshal(m)
}

// toolInput is a tool call's arguments as the tool_use block's input
// object ({} when empty).
func toolInput(args string) (json.RawMessage, error) {
	if args == "" {
		return json.RawMessage(`{}`), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("the arguments %q are not a JSON object", args)
	}
	return json.RawMessage(compact(args)), nil
}

// ErrorType is Anthropic's error type for an HTTP status.
func ErrorType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusConflict, http.StatusUnprocessableEntity,
		http.StatusRequestTimeout, http.StatusRequestHeaderFieldsTooLarge, http.StatusMisdirectedRequest, http.StatusUnsupportedMediaType:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusPaymentRequired:
		return "billing_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error"
	}
	if status >= 400 && status < 500 {
		return "invalid_request_error"
	}
	return "api_error"
}

// ErrorBody is Anthropic's error body: {"type":"error","error":{"type",
// "message"}} with arr's stable code (and the field at fault, when one
// is) beside them, and the request id.
func ErrorBody(status int, code, message, param, requestID string) []byte {
	e := map[string]any{"type": ErrorType(status), "message": message, "code": code}
	if param != "" {
		e["param"] = param
	}
	body := map[string]any{"type": "error", "error": e}
	if requestID != "" {
		body["request_id"] = requestID
	}
	b, _ := marshal(body)
	return b
}

// StopReasons are the stop reasons a Message (or message_delta) can have.
func StopReasons() []string { return []string{"end_turn", "max_tokens", "tool_use", "refusal"} }

// ErrorTypes are the error types ErrorType returns.
func ErrorTypes() []string {
	return []string{"invalid_request_error", "authentication_error", "billing_error", "permission_error", "not_found_error",
		"request_too_large", "rate_limit_error", "timeout_error", "overloaded_error", "api_error"}
}
