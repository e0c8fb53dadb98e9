package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"

	"encoding/json"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
)

// arrFields are the request fields the gateway reads and does not send
// upstream.
var arrFields = []string{"quality_floor", "max_cost_usd", "brand_pref"}

// chatRequest is a validated chat-completion request: the raw fields (all
// passed upstream unchanged, except model, max tokens and the gateway's
// own fields) and what routing reads.
type chatRequest struct {
	raw          map[string]json.RawMessage
	body         []byte
	model        string
	stream       bool
	includeUsage bool
	messages     []routing.Message
	tools        int
	jsonMode     bool
	temperature  *float64
	maxTokens    int64
	maxField     string // "max_tokens" or "max_completion_tokens"
	qualityFloor float64
	maxCostMicro int64
	brandPref    string
}

var validRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}

func invalid(code, param, format string, args ...any) error {
	return domain.Invalid(code, param, format, args...)
}

// parseChatRequest validates an OpenAI chat-completion body.
func parseChatRequest(body []byte) (*chatRequest, error) {
	r := &chatRequest{body: body, qualityFloor: routing.DefaultQualityFloor}
	// The standard library parses request bodies: FuzzChatRequest found
	// goccy's decoder letting malformed values into a RawMessage ({"":A""},
	// a failed upstream call) and panicking on long runs of invalid UTF-8
	// in a key (an index out of range).
	if !json.Valid(body) {
		return nil, invalid("invalid_json", "", "the body must be a JSON object (a chat completion request): it is not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&r.raw); err != nil || r.raw == nil {
		return nil, invalid("invalid_json", "", "the body must be a JSON object (a chat completion request): %v", errText(err))
	}
	if v, ok := r.raw["model"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &r.model); err != nil {
			return nil, invalid("invalid_type", "model", "model must be a string: auto, a tier (nano, small, mid, high) or a model id")
		}
	}
	if err := r.parseMessages(); err != nil {
		return nil, err
	}
	if v, ok := r.raw["stream"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &r.stream); err != nil {
			return nil, invalid("invalid_type", "stream", "stream must be a boolean")
		}
	}
	if v, ok := r.raw["stream_options"]; ok && !isNull(v) {
		var so struct {
			IncludeUsage *bool `json:"include_usage"`
		}
		if err := json.Unmarshal(v, &so); err != nil {
			return nil, invalid("invalid_type", "stream_options", "stream_options must be an object like {\"include_usage\": true}")
		}
		if !r.stream {
			return nil, invalid("invalid_value", "stream_options", "stream_options is only allowed when stream is true")
		}
		r.includeUsage = so.IncludeUsage != nil && *so.IncludeUsage
	}
	if v, ok := r.raw["temperature"]; ok && !isNull(v) {
		var t float64
		if err := json.Unmarshal(v, &t); err != nil || t < 0 || t > 2 {
			return nil, invalid("invalid_value", "temperature", "temperature must be a number from 0 to 2")
		}
		r.temperature = &t
	}
	for _, f := range []string{"max_completion_tokens", "max_tokens"} {
		if v, ok := r.raw[f]; ok && !isNull(v) {
			var n int64
			if err := json.Unmarshal(v, &n); err != nil || n < 1 {
				return nil, invalid("invalid_value", f, "%s must be an integer of at least 1", f)
			}
			if r.maxField == "" {
				r.maxTokens, r.maxField = n, f
			}
		}
	}
	if v, ok := r.raw["tools"]; ok && !isNull(v) {
		var tools []struct {
			Type     string `json:"type"`
			Function *struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(v, &tools); err != nil {
			return nil, invalid("invalid_type", "tools", "tools must be an array of {\"type\":\"function\",\"function\":{\"name\",...}}")
		}
		for i, t := range tools {
			if t.Type == "function" && (t.Function == nil || t.Function.Name == "") {
				return nil, invalid("invalid_value", fmt.Sprintf("tools[%d].function.name", i), "a function tool needs function.name")
			}
		}
		r.tools = len(tools)
	}
	if v, ok := r.raw["response_format"]; ok && !isNull(v) {
		var rf struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(v, &rf); err != nil || rf.Type == "" {
			return nil, invalid("invalid_type", "response_format", "response_format must be an object with a type (text, json_object or json_schema)")
		}
		r.jsonMode = rf.Type == "json_object" || rf.Type == "json_schema"
	}
	if v, ok := r.raw["quality_floor"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &r.qualityFloor); err != nil || r.qualityFloor < 0 || r.qualityFloor > 1 {
			return nil, invalid("invalid_value", "quality_floor", "quality_floor must be a number from 0 to 1 (default 0.75)")
		}
	}
	if v, ok := r.raw["max_cost_usd"]; ok && !isNull(v) {
		var usd float64
		if err := json.Unmarshal(v, &usd); err != nil || !(usd > 0) || usd > 1e6 {
			return nil, invalid("invalid_value", "max_cost_usd", "max_cost_usd must be a positive number of US dollars")
		}
		r.maxCostMicro = int64(math.Floor(usd * 1e6))
		if r.maxCostMicro < 1 {
			return nil, invalid("invalid_value", "max_cost_usd", "max_cost_usd must be at least 0.000001 (one micro-dollar)")
		}
	}
	if v, ok := r.raw["brand_pref"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &r.brandPref); err != nil {
			return nil, invalid("invalid_type", "brand_pref", "brand_pref must be a string naming one vendor")
		}
	}
	return r, nil
}

func (r *chatRequest) parseMessages() error {
	v, ok := r.raw["messages"]
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
		r.messages = append(r.messages, routing.Message{Role: role, Text: text})
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

// features are what the difficulty score reads.
func (r *chatRequest) features() routing.Features {
	return routing.Features{Messages: r.messages, Tools: r.tools, JSONMode: r.jsonMode}
}

// upstreamBody is the request to send to model m: the client's fields,
// the model replaced, the gateway's fields removed, max tokens capped, and
// for streams include_usage forced on (so real usage is recorded).
func (r *chatRequest) upstreamBody(c routingCandidate) ([]byte, error) {
	out := make(map[string]json.RawMessage, len(r.raw)+2)
	for k, v := range r.raw {
		out[k] = v
	}
	for _, f := range arrFields {
		delete(out, f)
	}
	out["model"], _ = json.Marshal(c.upstreamModel)
	if c.maxTokens > 0 {
		field := r.maxField
		if field == "" {
			field = "max_tokens"
		}
		out[field], _ = json.Marshal(c.maxTokens)
	}
	if r.stream {
		out["stream_options"] = json.RawMessage(`{"include_usage":true}`)
	}
	return json.Marshal(out)
}

// routingCandidate is what upstreamBody needs of a candidate.
type routingCandidate struct {
	upstreamModel string
	maxTokens     int64
}

// extraBytes is the size of the tools and response format, counted as
// prompt for the cost estimate.
func (r *chatRequest) extraBytes() int {
	return len(r.raw["tools"]) + len(r.raw["response_format"])
}

// cacheKey identifies the request for the response cache: the account
// and every field but stream and stream_options (so a stream can replay a
// cached reply and the other way round), keys sorted.
func (r *chatRequest) cacheKey(account string) string {
	m := make(map[string]json.RawMessage, len(r.raw))
	for k, v := range r.raw {
		if k != "stream" && k != "stream_options" {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	h := sha256.New()
	h.Write([]byte(account))
	h.Write([]byte{0})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// cacheable is the automatic rule: temperature 0 and no tools.
func (r *chatRequest) autoCacheable() bool {
	return r.temperature != nil && *r.temperature == 0 && r.tools == 0
}
