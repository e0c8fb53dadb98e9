package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/readapi/httpx"
)

// Request is a validated Messages request. Read-only after ParseRequest.
type Request struct {
	model       string
	messages    []chat.Message
	tools       []chat.Tool
	toolChoice  any // nil: not sent; a map (its keys go out sorted, as they always have)
	parallel    *bool
	stop        []string
	maxTokens   *int64
	temperature *float64
	topP        *float64
	stream      bool
	user        *string
	arr         []chat.Field
	// lenient: what the translation cannot express (fields, blocks and
	// tools it does not serve) is left out of the chat request, not
	// refused (ParseNative).
	lenient bool
}

// Streaming says whether the client asked for server-sent events.
func (r *Request) Streaming() bool { return r.stream }

// PassThrough says whether the request holds what the translation
// cannot express (ParseNative): only an Anthropic model can take it, as
// it came.
func (r *Request) PassThrough() bool { return r.lenient }

// Model is the requested model ("" when none was named: auto).
func (r *Request) Model() string { return r.model }

// StopSequences are the request's stop sequences.
func (r *Request) StopSequences() []string { return r.stop }

func invalid(code, param, format string, args ...any) error {
	return domain.Invalid(code, param, format, args...)
}

// Field rules: read (parsed and translated), ignored (accepted, no effect;
// the OpenAPI document lists them) or unknown (refused, as Anthropic's API
// refuses extra inputs).
var (
	readFields = map[string]bool{
		"model": true, "messages": true, "system": true, "max_tokens": true, "stop_sequences": true, "stream": true,
		"temperature": true, "top_p": true, "metadata": true, "tools": true, "tool_choice": true, "mcp_servers": true,
		"quality_floor": true, "max_cost_usd": true, "brand_pref": true,
	}
	ignoredFields = map[string]bool{
		"thinking": true, "top_k": true, "service_tier": true, "context_management": true, "cache_control": true,
		"output_config": true, "container": true, "inference_geo": true,
	}
	arrFields = []string{"quality_floor", "max_cost_usd", "brand_pref"}
	// aliasable are the fields the gateway reads or sets on the body an
	// Anthropic upstream is sent: a name that folds onto one of them
	// without being it is refused (aliased_field), as on the chat route.
	aliasable = []string{"model", "max_tokens", "stream", "quality_floor", "max_cost_usd", "brand_pref"}
)

// ParseRequest validates a POST /v1/messages body.
func ParseRequest(body []byte) (*Request, error) { return parse(body, true, false) }

// ParseNative validates a Messages body for an Anthropic upstream, which
// takes it as it came: what the chat translation does not serve (a
// top-level field arr does not read, mcp_servers, a server or versioned
// tool, a block or source type it does not translate) is left out of the
// chat request, which then only sizes and routes the request; the rest
// is checked as ParseRequest checks it.
func ParseNative(body []byte) (*Request, error) { return parse(body, true, true) }

// untranslatable says whether err refuses what only the translation
// cannot express (an Anthropic upstream may take it: ParseNative).
func untranslatable(err error) bool {
	var de *domain.Error
	return errors.As(err, &de) && (de.Code == "unknown_field" || de.Code == "unsupported_value")
}

// ParseCountRequest validates a POST /v1/messages/count_tokens body: a
// Messages request without max_tokens (which is accepted and has no
// effect on the count).
// A body with what the translation does not serve (a server tool, a field
// arr does not read) is counted without it, as ParseNative reads it: an
// Anthropic model could take it.
func ParseCountRequest(body []byte) (*Request, error) {
	r, err := parse(body, false, false)
	if untranslatable(err) {
		return parse(body, false, true)
	}
	return r, err
}

func parse(body []byte, needMaxTokens, lenient bool) (*Request, error) {
	if !json.Valid(body) {
		return nil, invalid("invalid_json", "", "the body must be a JSON object (a Messages request): it is not valid JSON")
	}
	if err := httpx.UniqueKeys(body); err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return nil, invalid("invalid_json", "", "the body must be a JSON object (a Messages request)")
	}
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if real, ok := httpx.AliasOf(k, aliasable); ok {
			return nil, invalid("aliased_field", k, "%q is not a field the gateway reads, but JSON parsers that ignore case read it as %s: send %s under its exact name", k, real, real)
		}
		if !readFields[k] && !ignoredFields[k] && !lenient {
			return nil, invalid("unknown_field", k, "%s: extra inputs are not permitted (see the gateway's OpenAPI document for the Messages fields arr reads)", k)
		}
	}
	r := &Request{lenient: lenient}
	for _, step := range []func(map[string]json.RawMessage) error{
		r.parseModel, r.parseSystem, r.parseMessages, r.parseTools, r.parseToolChoice, r.parseSampling, r.parseMetadata,
	} {
		if err := step(raw); err != nil {
			return nil, err
		}
	}
	if err := r.parseMaxTokens(raw, needMaxTokens); err != nil {
		return nil, err
	}
	if v, ok := raw["stream"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &r.stream); err != nil {
			return nil, invalid("invalid_type", "stream", "stream must be a boolean")
		}
	}
	if v, ok := raw["mcp_servers"]; ok && !lenient && !isNull(v) && string(bytes.TrimSpace(v)) != "[]" {
		return nil, invalid("unsupported_value", "mcp_servers", "mcp_servers is not supported: arr connects to no MCP servers; run the tools on the client and send them as tools")
	}
	for _, f := range arrFields {
		if v, ok := raw[f]; ok {
			r.arr = append(r.arr, chat.Field{Name: f, Raw: v})
		}
	}
	return r, nil
}

func (r *Request) parseModel(raw map[string]json.RawMessage) error {
	v, ok := raw["model"]
	if !ok || isNull(v) {
		return nil
	}
	if err := json.Unmarshal(v, &r.model); err != nil {
		return invalid("invalid_type", "model", "model must be a string: auto, a tier (nano, small, mid, high), a model id or an alias (claude-…)")
	}
	return nil
}

func (r *Request) parseMaxTokens(raw map[string]json.RawMessage, required bool) error {
	v, ok := raw["max_tokens"]
	if !ok || isNull(v) {
		if required {
			return invalid("missing_max_tokens", "max_tokens", "max_tokens is required: the most tokens the reply may have, at least 1")
		}
		return nil
	}
	var n int64
	if err := json.Unmarshal(v, &n); err != nil || n < 1 {
		return invalid("invalid_value", "max_tokens", "max_tokens must be an integer of at least 1")
	}
	if required {
		r.maxTokens = &n
	}
	return nil
}

func (r *Request) parseSampling(raw map[string]json.RawMessage) error {
	for _, f := range []struct {
		name string
		dst  **float64
	}{{"temperature", &r.temperature}, {"top_p", &r.topP}} {
		v, ok := raw[f.name]
		if !ok || isNull(v) {
			continue
		}
		var x float64
		if err := json.Unmarshal(v, &x); err != nil || x < 0 || x > 1 {
			return invalid("invalid_value", f.name, "%s must be a number from 0 to 1", f.name)
		}
		*f.dst = &x
	}
	v, ok := raw["stop_sequences"]
	if !ok || isNull(v) {
		return nil
	}
	if err := json.Unmarshal(v, &r.stop); err != nil {
		return invalid("invalid_type", "stop_sequences", "stop_sequences must be an array of strings")
	}
	for i, s := range r.stop {
		if s == "" {
			return invalid("invalid_value", fmt.Sprintf("stop_sequences[%d]", i), "a stop sequence must not be empty")
		}
	}
	return nil
}

// maxUserLen is the longest user id forwarded as chat's user.
const maxUserLen = 64

func (r *Request) parseMetadata(raw map[string]json.RawMessage) error {
	v, ok := raw["metadata"]
	if !ok || isNull(v) {
		return nil
	}
	var md struct {
		UserID *string `json:"user_id"`
	}
	if err := json.Unmarshal(v, &md); err != nil {
		return invalid("invalid_type", "metadata", "metadata must be an object like {\"user_id\": \"…\"}")
	}
	// OpenAI refuses a user over 64 characters: a longer id (Claude Code
	// sends a JSON object of device, account and session) is not
	// forwarded.
	if md.UserID != nil && *md.UserID != "" && len(*md.UserID) <= maxUserLen {
		r.user = md.UserID
	}
	return nil
}

func (r *Request) parseSystem(raw map[string]json.RawMessage) error {
	v, ok := raw["system"]
	if !ok || isNull(v) {
		return nil
	}
	text, err := textBlocks(v)
	if err != nil {
		return invalid("invalid_type", "system", "system must be a string or an array of text blocks")
	}
	if text != "" {
		r.messages = append(r.messages, chat.Message{Role: "system", Content: text})
	}
	return nil
}

// textBlocks reads a string or an array of {"type":"text","text":…}
// blocks (joined by blank lines).
func textBlocks(v json.RawMessage) (string, error) {
	if v[0] == '"' {
		var s string
		err := json.Unmarshal(v, &s)
		return s, err
	}
	var blocks []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(v, &blocks); err != nil {
		return "", err
	}
	var b bytes.Buffer
	for _, bl := range blocks {
		if bl.Type != "text" || bl.Text == nil {
			return "", fmt.Errorf("a block of type %q", bl.Type)
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(*bl.Text)
	}
	return b.String(), nil
}

func isNull(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) == 0 || string(v) == "null"
}
