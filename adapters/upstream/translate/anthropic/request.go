package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/chat"
)

// DefaultMaxTokens is the max_tokens of a request that names none when
// the model's output limit is not known (Options.MaxTokens 0).
const DefaultMaxTokens = 4096

// Options are what Request knows of the upstream model besides the body.
type Options struct {
	// MaxTokens is the model's output-token limit: the max_tokens of a
	// request that names none, and what a larger one is cut to (0: not
	// known; DefaultMaxTokens for a request without one, no cut).
	MaxTokens int64
	// Cache asks for Anthropic's automatic prompt caching (a top-level
	// cache_control) on every request; a request with prompt_cache_key
	// asks for it by itself.
	Cache bool
}

// Translated is a chat request as a Messages request.
type Translated struct {
	// Body is the Messages request, its model the chat request's.
	Body []byte
	// Stream says whether the chat request asked for a stream (Body
	// asks for one then too).
	Stream bool
	// IncludeUsage is the chat request's stream_options.include_usage:
	// whether its Stream ends with a usage chunk.
	IncludeUsage bool
}

// chatIn is the chat request as Request reads it.
type chatIn struct {
	Model               string                       `json:"model"`
	Messages            []map[string]json.RawMessage `json:"messages"`
	Tools               []chat.Tool                  `json:"tools"`
	ToolChoice          json.RawMessage              `json:"tool_choice"`
	ParallelToolCalls   *bool                        `json:"parallel_tool_calls"`
	Stop                json.RawMessage              `json:"stop"`
	ResponseFormat      json.RawMessage              `json:"response_format"`
	ReasoningEffort     *string                      `json:"reasoning_effort"`
	Temperature         *float64                     `json:"temperature"`
	TopP                *float64                     `json:"top_p"`
	MaxCompletionTokens *int64                       `json:"max_completion_tokens"`
	MaxTokens           *int64                       `json:"max_tokens"`
	Stream              *bool                        `json:"stream"`
	StreamOptions       *chat.StreamOptions          `json:"stream_options"`
	User                *string                      `json:"user"`
	SafetyIdentifier    *string                      `json:"safety_identifier"`
	PromptCacheKey      *string                      `json:"prompt_cache_key"`
}

// fieldRules: the chat fields Request reads, those it accepts with no
// effect, and those accepted only at a value that asks for nothing
// (anything else of theirs is refused: Anthropic has no equivalent).
var (
	readFields = map[string]bool{
		"model": true, "messages": true, "tools": true, "tool_choice": true, "parallel_tool_calls": true, "stop": true,
		"response_format": true, "reasoning_effort": true, "temperature": true, "top_p": true, "max_completion_tokens": true,
		"max_tokens": true, "stream": true, "stream_options": true, "user": true, "safety_identifier": true, "prompt_cache_key": true,
	}
	ignoredFields = map[string]bool{"verbosity": true, "store": true}
	// neutralFields are accepted at these values (JSON text, compacted).
	neutralFields = map[string][]string{
		"n": {"1"}, "logprobs": {"false"}, "frequency_penalty": {"0"}, "presence_penalty": {"0"},
		"logit_bias": {"{}"}, "metadata": {"{}"}, "service_tier": {`"auto"`, `"default"`}, "modalities": {`["text"]`},
		"top_logprobs": {"0"},
	}
)

// unsupportedWhy says why a chat field Anthropic has no equivalent for is
// refused.
var unsupportedWhy = map[string]string{
	"n":                  "Anthropic models answer one choice: n must be 1",
	"logprobs":           "Anthropic models return no log probabilities",
	"top_logprobs":       "Anthropic models return no log probabilities",
	"seed":               "Anthropic models take no seed",
	"audio":              "Anthropic models answer no audio",
	"modalities":         "Anthropic models answer text only",
	"prediction":         "Anthropic models take no predicted output",
	"functions":          "send tools instead of the deprecated functions",
	"function_call":      "send tool_choice instead of the deprecated function_call",
	"web_search_options": "arr runs no web search for Anthropic models",
}

func invalid(code, param, format string, args ...any) error {
	return domain.Invalid(code, param, format, args...)
}

// Request translates a chat-completion body into a Messages body (see
// the package doc). Its errors are domain.ErrInvalid (a 400) with a
// stable code and the field at fault.
func Request(body []byte, o Options) (Translated, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return Translated{}, invalid("invalid_json", "", "the body must be a JSON object (a chat-completion request)")
	}
	if err := checkFields(raw); err != nil {
		return Translated{}, err
	}
	var in chatIn
	if err := json.Unmarshal(body, &in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Translated{}, invalid("invalid_type", te.Field, "%s must not be a JSON %s", te.Field, te.Value)
		}
		return Translated{}, invalid("invalid_json", "", "the chat request cannot be read: %v", err)
	}
	out := messagesRequest{Model: in.Model}
	if err := translate(&in, &out, o); err != nil {
		return Translated{}, err
	}
	b, err := chat.Marshal(&out, chat.Verbatim)
	if err != nil {
		return Translated{}, fmt.Errorf("encoding the Messages request: %w", err)
	}
	t := Translated{Body: b, Stream: out.Stream}
	if out.Stream && in.StreamOptions != nil {
		t.IncludeUsage = in.StreamOptions.IncludeUsage
	}
	return t, nil
}

// translate fills out from in, step by step.
func translate(in *chatIn, out *messagesRequest, o Options) error {
	if in.Model == "" {
		return invalid("missing_model", "model", "model is required")
	}
	if in.Stream != nil {
		out.Stream = *in.Stream
	}
	for _, step := range []func(*chatIn, *messagesRequest) error{
		translateMessages, translateTools, translateToolChoice, translateSampling, translateResponseFormat,
	} {
		if err := step(in, out); err != nil {
			return err
		}
	}
	if err := maxTokens(in, out, o); err != nil {
		return err
	}
	if err := translateReasoning(in, out); err != nil {
		return err
	}
	if in.User != nil && *in.User != "" {
		out.Metadata = &metadata{UserID: *in.User}
	} else if in.SafetyIdentifier != nil && *in.SafetyIdentifier != "" {
		out.Metadata = &metadata{UserID: *in.SafetyIdentifier}
	}
	if o.Cache || (in.PromptCacheKey != nil && *in.PromptCacheKey != "") {
		out.CacheControl = &cacheControl{Type: "ephemeral"}
	}
	return nil
}

// checkFields refuses a field chat completions do not have, and one
// Anthropic has no equivalent for at a value that asks for something.
func checkFields(raw map[string]json.RawMessage) error {
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if readFields[k] || ignoredFields[k] {
			continue
		}
		v := bytes.TrimSpace(raw[k])
		if string(v) == "null" {
			continue
		}
		if ok, known := neutralFields[k]; known {
			var c bytes.Buffer
			_ = json.Compact(&c, v)
			if contains(ok, c.String()) || isZeroNumber(c.String(), ok) {
				continue
			}
		}
		if why, known := unsupportedWhy[k]; known {
			return invalid("unsupported_parameter", k, "%s is not supported by this model's API: %s", k, why)
		}
		if _, known := neutralFields[k]; known {
			return invalid("unsupported_parameter", k, "%s is not supported by this model's API (Anthropic's Messages): only %s is accepted", k, strings.Join(neutralFields[k], " or "))
		}
		return invalid("unknown_field", k, "%s: unknown field (not a chat-completion field arr translates for Anthropic models)", k)
	}
	return nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// isZeroNumber: a number written otherwise than ok's "0" (0.0, -0) is
// zero too.
func isZeroNumber(s string, ok []string) bool {
	if !contains(ok, "0") {
		return false
	}
	var f float64
	return json.Unmarshal([]byte(s), &f) == nil && f == 0
}

// maxTokens sets max_tokens: the request's, at most the model's limit,
// else the model's limit (DefaultMaxTokens when it is not known).
func maxTokens(in *chatIn, out *messagesRequest, o Options) error {
	n, field := in.MaxCompletionTokens, "max_completion_tokens"
	if n == nil {
		n, field = in.MaxTokens, "max_tokens"
	}
	switch {
	case n == nil && o.MaxTokens > 0:
		out.MaxTokens = o.MaxTokens
	case n == nil:
		out.MaxTokens = DefaultMaxTokens
	case *n < 1:
		return invalid("invalid_value", field, "%s must be at least 1", field)
	case o.MaxTokens > 0 && *n > o.MaxTokens:
		out.MaxTokens = o.MaxTokens
	default:
		out.MaxTokens = *n
	}
	return nil
}

// translateSampling: temperature (Anthropic's range is 0 to 1), top_p and
// stop (a string or an array of strings) as stop_sequences.
func translateSampling(in *chatIn, out *messagesRequest) error {
	if t := in.Temperature; t != nil {
		if *t < 0 || *t > 1 {
			return invalid("unsupported_value", "temperature", "temperature must be from 0 to 1 for this model (Anthropic's range), not %g", *t)
		}
		out.Temperature = t
	}
	if p := in.TopP; p != nil {
		if *p < 0 || *p > 1 {
			return invalid("invalid_value", "top_p", "top_p must be from 0 to 1")
		}
		out.TopP = p
	}
	stop := bytes.TrimSpace(in.Stop)
	switch {
	case len(stop) == 0 || string(stop) == "null":
		return nil
	case stop[0] == '"':
		var s string
		_ = json.Unmarshal(stop, &s)
		out.StopSequences = []string{s}
	default:
		if err := json.Unmarshal(stop, &out.StopSequences); err != nil {
			return invalid("invalid_type", "stop", "stop must be a string or an array of strings")
		}
	}
	for i, s := range out.StopSequences {
		if strings.TrimSpace(s) == "" {
			return invalid("invalid_value", fmt.Sprintf("stop[%d]", i), "a stop sequence must not be empty or only whitespace (Anthropic refuses it)")
		}
	}
	return nil
}
