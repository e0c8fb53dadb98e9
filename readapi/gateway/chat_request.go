package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/readapi/httpx"
)

var validRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}

func invalid(code, param, format string, args ...any) error {
	return domain.Invalid(code, param, format, args...)
}

// parseChatRequest validates an OpenAI chat-completion body: every field
// the gateway reads is checked, and the rest is passed upstream as sent.
func parseChatRequest(body []byte) (*complete.Request, error) {
	r := &complete.Request{Body: body, QualityFloor: routing.DefaultQualityFloor}
	// The standard library parses request bodies: FuzzChatRequest found
	// goccy's decoder letting malformed values into a RawMessage ({"":A""},
	// a failed upstream call) and panicking on long runs of invalid UTF-8
	// in a key (an index out of range).
	if !json.Valid(body) {
		return nil, invalid("invalid_json", "", "the body must be a JSON object (a chat completion request): it is not valid JSON")
	}
	if err := httpx.UniqueKeys(body); err != nil {
		return nil, err
	}
	// Unmarshal, not a Decoder: a Decoder copies the whole body into its
	// buffer first (the fields are raw values, which numbers do not
	// change).
	if err := json.Unmarshal(body, &r.Fields); err != nil || r.Fields == nil {
		return nil, invalid("invalid_json", "", "the body must be a JSON object (a chat completion request): %v", errText(err))
	}
	if err := refuseAliases(r.Fields); err != nil {
		return nil, err
	}
	for _, f := range chatFields {
		if f.name == "messages" {
			if err := parseMessages(r); err != nil {
				return nil, err
			}
			continue
		}
		if v, ok := r.Fields[f.name]; ok && !isNull(v) {
			if err := f.parse(r, v); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// refuseAliases refuses a top-level name that stands for a field the
// gateway reads or sets without being it (httpx.AliasOf): the gateway
// reads fields by their exact names and relays the others, so "MAX_TOKENS"
// or "max_to\u212aens" beside (or instead of) max_tokens would reach an
// upstream whose parser folds names (Go's encoding/json does) as a
// max_tokens the gateway never capped.
func refuseAliases(fields map[string]json.RawMessage) error {
	known := make([]string, 0, len(chatFields))
	for _, f := range chatFields {
		known = append(known, f.name)
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if real, ok := httpx.AliasOf(name, known); ok {
			return invalid("aliased_field", name, "%q is not a field the gateway reads, but JSON parsers that ignore case read it as %s: send %s under its exact name", name, real, real)
		}
	}
	return nil
}

// chatFields are the fields of a chat completion request the gateway
// reads, each with its parser, in the order they are checked (the first
// bad one is the one reported; stream comes before stream_options, which
// needs it). messages is parsed by parseMessages, present or not.
var chatFields = []struct {
	name  string
	parse func(r *complete.Request, v json.RawMessage) error
}{
	{"model", func(r *complete.Request, v json.RawMessage) error {
		if err := json.Unmarshal(v, &r.Model); err != nil {
			return invalid("invalid_type", "model", "model must be a string: auto, a tier (nano, small, mid, high) or a model id")
		}
		return nil
	}},
	{"messages", nil},
	{"stream", func(r *complete.Request, v json.RawMessage) error {
		if err := json.Unmarshal(v, &r.Stream); err != nil {
			return invalid("invalid_type", "stream", "stream must be a boolean")
		}
		return nil
	}},
	{"stream_options", parseStreamOptions},
	{"temperature", func(r *complete.Request, v json.RawMessage) error {
		var t float64
		if err := json.Unmarshal(v, &t); err != nil || t < 0 || t > 2 {
			return invalid("invalid_value", "temperature", "temperature must be a number from 0 to 2")
		}
		r.Temperature = &t
		return nil
	}},
	{"max_completion_tokens", maxTokens("max_completion_tokens")},
	{"max_tokens", maxTokens("max_tokens")},
	{"tools", parseTools},
	{"response_format", func(r *complete.Request, v json.RawMessage) error {
		var rf struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(v, &rf); err != nil || rf.Type == "" {
			return invalid("invalid_type", "response_format", "response_format must be an object with a type (text, json_object or json_schema)")
		}
		r.JSONMode = rf.Type == "json_object" || rf.Type == "json_schema"
		return nil
	}},
	{"quality_floor", func(r *complete.Request, v json.RawMessage) error {
		if err := json.Unmarshal(v, &r.QualityFloor); err != nil || r.QualityFloor < 0 || r.QualityFloor > 1 {
			return invalid("invalid_value", "quality_floor", "quality_floor must be a number from 0 to 1 (default 0.75)")
		}
		return nil
	}},
	{"max_cost_usd", parseMaxCost},
	{"brand_pref", func(r *complete.Request, v json.RawMessage) error {
		if err := json.Unmarshal(v, &r.BrandPref); err != nil {
			return invalid("invalid_type", "brand_pref", "brand_pref must be a string naming one vendor")
		}
		return nil
	}},
}

func parseStreamOptions(r *complete.Request, v json.RawMessage) error {
	var so struct {
		IncludeUsage *bool `json:"include_usage"`
	}
	if err := json.Unmarshal(v, &so); err != nil {
		return invalid("invalid_type", "stream_options", "stream_options must be an object like {\"include_usage\": true}")
	}
	if !r.Stream {
		return invalid("invalid_value", "stream_options", "stream_options is only allowed when stream is true")
	}
	r.IncludeUsage = so.IncludeUsage != nil && *so.IncludeUsage
	return nil
}

// maxTokens parses field f, one of the two names of the completion's
// token limit; the first given wins.
func maxTokens(f string) func(r *complete.Request, v json.RawMessage) error {
	return func(r *complete.Request, v json.RawMessage) error {
		var n int64
		if err := json.Unmarshal(v, &n); err != nil || n < 1 {
			return invalid("invalid_value", f, "%s must be an integer of at least 1", f)
		}
		if r.MaxTokensField == "" {
			r.MaxTokens, r.MaxTokensField = n, f
		}
		return nil
	}
}

func parseTools(r *complete.Request, v json.RawMessage) error {
	var tools []struct {
		Type     string `json:"type"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(v, &tools); err != nil {
		return invalid("invalid_type", "tools", "tools must be an array of {\"type\":\"function\",\"function\":{\"name\",...}}")
	}
	for i, t := range tools {
		if t.Type == "function" && (t.Function == nil || t.Function.Name == "") {
			return invalid("invalid_value", fmt.Sprintf("tools[%d].function.name", i), "a function tool needs function.name")
		}
	}
	r.Tools = len(tools)
	return nil
}

func parseMaxCost(r *complete.Request, v json.RawMessage) error {
	var usd float64
	if err := json.Unmarshal(v, &usd); err != nil || !(usd > 0) || usd > 1e6 {
		return invalid("invalid_value", "max_cost_usd", "max_cost_usd must be a positive number of US dollars")
	}
	r.MaxCostMicro = int64(math.Floor(usd * 1e6))
	if r.MaxCostMicro < 1 {
		return invalid("invalid_value", "max_cost_usd", "max_cost_usd must be at least 0.000001 (one micro-dollar)")
	}
	return nil
}

func parseMessages(r *complete.Request) error {
	v, ok := r.Fields["messages"]
	if !ok || isNull(v) {
		return invalid("missing_messages", "messages", "messages is required: a non-empty array of {role, content}")
	}
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(v, &msgs); err != nil {
		return invalid("invalid_type", "messages", "messages must be an array of objects")
	}
	if len(msgs) == 0 {
		return invalid("empty_messages", "messages", "messages must not be empty")
	}
	for i, m := range msgs {
		var role string
		if err := json.Unmarshal(m["role"], &role); err != nil || !validRoles[role] {
			return invalid("invalid_role", fmt.Sprintf("messages[%d].role", i), "role must be one of system, developer, user, assistant, tool")
		}
		content, has := m["content"]
		text, err := contentText(content)
		if err != nil {
			return invalid("invalid_content", fmt.Sprintf("messages[%d].content", i), "content must be a string or an array of content parts")
		}
		if (!has || isNull(content)) && !(role == "assistant" && (m["tool_calls"] != nil || m["function_call"] != nil)) {
			return invalid("missing_content", fmt.Sprintf("messages[%d].content", i), "content is required (only an assistant message with tool_calls may leave it null)")
		}
		if role == "tool" {
			var id string
			if err := json.Unmarshal(m["tool_call_id"], &id); err != nil || id == "" {
				return invalid("missing_tool_call_id", fmt.Sprintf("messages[%d].tool_call_id", i), "a tool message needs the tool_call_id it answers")
			}
		}
		r.Messages = append(r.Messages, routing.Message{Role: role, Text: text})
	}
	return nil
}

// contentText returns the text of a content value: a string, or the text
// parts of an array.
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || isNull(raw) {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var b bytes.Buffer
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

func isNull(v json.RawMessage) bool { return len(v) == 0 || string(v) == "null" }

func errText(err error) string {
	if err == nil {
		return "null"
	}
	return err.Error()
}
