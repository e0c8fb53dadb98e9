package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/readapi/httpx"
)

// ArrFields returns the gateway's own request fields (routing
// constraints). They are passed to the chat request unchanged, where the
// chat route reads and validates them as it does for a chat completion.
func ArrFields() []string { return []string{"quality_floor", "max_cost_usd", "brand_pref"} }

// Request is a validated Responses request. Read-only after ParseRequest.
type Request struct {
	model          string
	messages       []chat.Message
	instructions   *string
	tools          []functionTool
	toolChoice     json.RawMessage // the Response's echo
	chatToolChoice any             // nil: not sent
	format         json.RawMessage // text.format as echoed
	chatFormat     any             // response_format; nil: not sent
	verbosity      string
	temperature    *float64
	topP           *float64
	maxOutput      *int64
	stream         bool
	metadata       map[string]string
	parallel       *bool
	user           *string
	safetyID       *string
	promptCacheKey *string
	effort         string
	serviceTier    string
	truncation     string
	arr            []chat.Field
}

// Streaming says whether the client asked for server-sent events.
func (r *Request) Streaming() bool { return r.stream }

// Model is the requested model ("" when none was named: auto).
func (r *Request) Model() string { return r.model }

func invalid(code, param, format string, args ...any) error {
	return domain.Invalid(code, param, format, args...)
}

// fieldRule is what ParseRequest does with a top-level field.
type fieldRule int

const (
	fieldUnknown fieldRule = iota
	fieldRead              // parsed and translated (or echoed)
	fieldIgnored           // accepted, no effect (documented in the OpenAPI document)
)

// ruleFor says how a top-level field is handled. Fields that would change
// what the client gets and cannot be honoured are read, so they are
// refused with their own message.
func ruleFor(name string) fieldRule {
	switch name {
	case "model", "input", "instructions", "tools", "tool_choice", "text", "temperature", "top_p",
		"max_output_tokens", "stream", "metadata", "store", "parallel_tool_calls", "user",
		"safety_identifier", "prompt_cache_key", "reasoning", "service_tier", "truncation",
		"include", "top_logprobs", "background", "previous_response_id", "conversation", "prompt",
		"quality_floor", "max_cost_usd", "brand_pref":
		return fieldRead
	case "stream_options", "max_tool_calls", "prompt_cache_retention", "prompt_cache_options", "context_management":
		return fieldIgnored
	}
	return fieldUnknown
}

// ParseRequest validates a Responses request body.
func ParseRequest(body []byte) (*Request, error) {
	// The standard library parses request bodies, as the chat route does.
	if !json.Valid(body) {
		return nil, invalid("invalid_json", "", "the body must be a JSON object (a Responses request): it is not valid JSON")
	}
	if err := httpx.UniqueKeys(body); err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, invalid("invalid_json", "", "the body must be a JSON object (a Responses request)")
	}
	var unknown []string
	for k := range raw {
		if ruleFor(k) == fieldUnknown {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, invalid("unknown_parameter", unknown[0], "unknown parameter %q: arr's /v1/responses takes model, input, instructions, tools, tool_choice, text, temperature, top_p, max_output_tokens, stream, metadata, store, parallel_tool_calls, user and its routing fields (quality_floor, max_cost_usd, brand_pref); see /openapi.json", unknown[0])
	}
	r := &Request{}
	if err := r.refuseStored(raw); err != nil {
		return nil, err
	}
	steps := []func(map[string]json.RawMessage) error{
		r.parseScalars, r.parseInput, r.parseTools, r.parseToolChoice, r.parseText, r.parseExtras,
	}
	for _, step := range steps {
		if err := step(raw); err != nil {
			return nil, err
		}
	}
	for _, f := range ArrFields() {
		if v, ok := raw[f]; ok {
			var b bytes.Buffer
			if err := json.Compact(&b, v); err != nil {
				return nil, invalid("invalid_json", f, "%s is not valid JSON", f)
			}
			r.arr = append(r.arr, chat.Field{Name: f, Raw: b.Bytes()})
		}
	}
	return r, nil
}

// refuseStored refuses what needs responses, conversations or prompts
// stored at the server: arr stores none.
func (r *Request) refuseStored(raw map[string]json.RawMessage) error {
	if v, ok := raw["previous_response_id"]; ok && !isNull(v) {
		return invalid("unsupported_parameter", "previous_response_id", "previous_response_id is not supported: arr does not store responses, so it cannot continue one; send the whole conversation as input items (the earlier input, then the earlier response's output items, then the new turn)")
	}
	if v, ok := raw["conversation"]; ok && !isNull(v) {
		return invalid("unsupported_parameter", "conversation", "conversation is not supported: arr does not store conversations; send the whole conversation as input items")
	}
	if v, ok := raw["prompt"]; ok && !isNull(v) {
		return invalid("unsupported_parameter", "prompt", "prompt (a stored prompt template) is not supported: arr stores no prompts; send the text as instructions and input")
	}
	if v, ok := raw["background"]; ok && !isNull(v) {
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return invalid("invalid_type", "background", "background must be a boolean")
		}
		if b {
			return invalid("unsupported_parameter", "background", "background responses are not supported: arr does not store responses to poll later; send the request without background (stream it for long answers)")
		}
	}
	return nil
}

func (r *Request) parseScalars(raw map[string]json.RawMessage) error {
	if err := optString(raw, "model", &r.model, "model must be a string: auto, a tier (nano, small, mid, high) or a model id"); err != nil {
		return err
	}
	if v, ok := raw["stream"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &r.stream); err != nil {
			return invalid("invalid_type", "stream", "stream must be a boolean")
		}
	}
	if v, ok := raw["temperature"]; ok && !isNull(v) {
		var t float64
		if err := json.Unmarshal(v, &t); err != nil || t < 0 || t > 2 {
			return invalid("invalid_value", "temperature", "temperature must be a number from 0 to 2")
		}
		r.temperature = &t
	}
	if v, ok := raw["top_p"]; ok && !isNull(v) {
		var p float64
		if err := json.Unmarshal(v, &p); err != nil || p < 0 || p > 1 {
			return invalid("invalid_value", "top_p", "top_p must be a number from 0 to 1")
		}
		r.topP = &p
	}
	if v, ok := raw["max_output_tokens"]; ok && !isNull(v) {
		var n int64
		if err := json.Unmarshal(v, &n); err != nil || n < 1 {
			return invalid("invalid_value", "max_output_tokens", "max_output_tokens must be an integer of at least 1")
		}
		r.maxOutput = &n
	}
	for _, f := range []struct {
		name string
		dst  **bool
	}{{"parallel_tool_calls", &r.parallel}, {"store", new(*bool)}} {
		if v, ok := raw[f.name]; ok && !isNull(v) {
			var b bool
			if err := json.Unmarshal(v, &b); err != nil {
				return invalid("invalid_type", f.name, "%s must be a boolean", f.name)
			}
			*f.dst = &b
		}
	}
	for _, f := range []struct {
		name string
		dst  **string
	}{{"user", &r.user}, {"safety_identifier", &r.safetyID}, {"prompt_cache_key", &r.promptCacheKey}} {
		var s string
		if err := optString(raw, f.name, &s, f.name+" must be a string"); err != nil {
			return err
		}
		if _, ok := raw[f.name]; ok && !isNull(raw[f.name]) {
			*f.dst = &s
		}
	}
	return r.parseMetadata(raw)
}

func (r *Request) parseMetadata(raw map[string]json.RawMessage) error {
	v, ok := raw["metadata"]
	if !ok || isNull(v) {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(v, &m); err != nil {
		return invalid("invalid_type", "metadata", "metadata must be an object of string values")
	}
	if len(m) > 16 {
		return invalid("invalid_value", "metadata", "metadata may have at most 16 keys (it has %d)", len(m))
	}
	r.metadata = make(map[string]string, len(m))
	for k, val := range m {
		s, ok := val.(string)
		if !ok {
			return invalid("invalid_type", "metadata."+k, "metadata values must be strings")
		}
		if utf8.RuneCountInString(k) > 64 || utf8.RuneCountInString(s) > 512 {
			return invalid("invalid_value", "metadata."+k, "metadata keys may have at most 64 characters and values at most 512")
		}
		r.metadata[k] = s
	}
	return nil
}

// parseExtras reads the fields that arr serves by their OpenAI meaning
// without translating them one for one.
func (r *Request) parseExtras(raw map[string]json.RawMessage) error {
	if v, ok := raw["reasoning"]; ok && !isNull(v) {
		var re struct {
			Effort *string `json:"effort"`
		}
		if err := json.Unmarshal(v, &re); err != nil {
			return invalid("invalid_type", "reasoning", "reasoning must be an object like {\"effort\": \"low\"}")
		}
		if re.Effort != nil {
			switch *re.Effort {
			case "none", "minimal", "low", "medium", "high", "xhigh":
				r.effort = *re.Effort
			default:
				return invalid("invalid_value", "reasoning.effort", "reasoning.effort must be one of none, minimal, low, medium, high, xhigh")
			}
		}
	}
	if err := optString(raw, "service_tier", &r.serviceTier, "service_tier must be a string"); err != nil {
		return err
	}
	if err := optString(raw, "truncation", &r.truncation, "truncation must be auto or disabled"); err != nil {
		return err
	}
	if r.truncation != "" && r.truncation != "auto" && r.truncation != "disabled" {
		return invalid("invalid_value", "truncation", "truncation must be auto or disabled")
	}
	if v, ok := raw["top_logprobs"]; ok && !isNull(v) {
		var n int64
		if err := json.Unmarshal(v, &n); err != nil || n < 0 || n > 20 {
			return invalid("invalid_value", "top_logprobs", "top_logprobs must be an integer from 0 to 20")
		}
		if n > 0 {
			return invalid("unsupported_parameter", "top_logprobs", "log probabilities are not returned on /v1/responses; use /v1/chat/completions with logprobs, or leave top_logprobs out")
		}
	}
	if v, ok := raw["include"]; ok && !isNull(v) {
		var inc []string
		if err := json.Unmarshal(v, &inc); err != nil {
			return invalid("invalid_type", "include", "include must be an array of strings")
		}
		for i, s := range inc {
			if s == "message.output_text.logprobs" {
				return invalid("unsupported_parameter", fmt.Sprintf("include[%d]", i), "log probabilities are not returned on /v1/responses; use /v1/chat/completions with logprobs, or leave message.output_text.logprobs out of include")
			}
		}
	}
	return nil
}

func optString(raw map[string]json.RawMessage, name string, dst *string, msg string) error {
	v, ok := raw[name]
	if !ok || isNull(v) {
		return nil
	}
	if err := json.Unmarshal(v, dst); err != nil {
		return invalid("invalid_type", name, "%s", msg)
	}
	return nil
}

func isNull(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) == 0 || string(v) == "null"
}
