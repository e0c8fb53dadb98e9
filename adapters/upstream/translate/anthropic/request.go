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

// MaxOutputTokens is what a request's max_tokens is cut to when the
// model's output limit is not known (Options.MaxTokens 0): 128000, the
// largest output an Anthropic model offers, so a client's 2^63-1 does not
// reach the upstream (or the cost estimates made from the body) as it is.
const MaxOutputTokens = 128000

// Options are what Request knows of the upstream model besides the body.
type Options struct {
	// MaxTokens is the model's output-token limit: the max_tokens of a
	// request that names none, and what a larger one is cut to (0: not
	// known; DefaultMaxTokens for a request without one, MaxOutputTokens
	// the cut).
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

// chatIn is the chat request as Request reads it: each field from the
// member of exactly its name (readChat), never through encoding/json's
// case-insensitive matching of names to a struct's fields.
type chatIn struct {
	Model               string
	Messages            []map[string]json.RawMessage
	Tools               []chat.Tool
	ToolChoice          json.RawMessage
	ParallelToolCalls   *bool
	Stop                json.RawMessage
	ResponseFormat      json.RawMessage
	ReasoningEffort     *string
	Temperature         *float64
	TopP                *float64
	MaxCompletionTokens *int64
	MaxTokens           *int64
	Stream              *bool
	StreamOptions       json.RawMessage
	User                *string
	SafetyIdentifier    *string
	PromptCacheKey      *string
}

// targets are where readChat decodes each field in, by its name: the
// names are readFields.
func (in *chatIn) targets() map[string]any {
	return map[string]any{
		"model": &in.Model, "messages": &in.Messages, "tools": &in.Tools, "tool_choice": &in.ToolChoice,
		"parallel_tool_calls": &in.ParallelToolCalls, "stop": &in.Stop, "response_format": &in.ResponseFormat,
		"reasoning_effort": &in.ReasoningEffort, "temperature": &in.Temperature, "top_p": &in.TopP,
		"max_completion_tokens": &in.MaxCompletionTokens, "max_tokens": &in.MaxTokens, "stream": &in.Stream,
		"stream_options": &in.StreamOptions, "user": &in.User, "safety_identifier": &in.SafetyIdentifier,
		"prompt_cache_key": &in.PromptCacheKey,
	}
}

// readChat decodes the fields Request reads from raw, the body's members
// by their exact names (checkFields has refused every other name).
func readChat(raw map[string]json.RawMessage) (*chatIn, error) {
	in := &chatIn{}
	targets := in.targets()
	names := make([]string, 0, len(targets))
	for k := range targets {
		names = append(names, k)
	}
	sort.Strings(names) // the first bad field reported is always the same
	for _, k := range names {
		v, ok := raw[k]
		if !ok {
			continue
		}
		if err := json.Unmarshal(v, targets[k]); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				field := k
				if te.Field != "" {
					field = k + "." + te.Field
				}
				return nil, invalid("invalid_type", field, "%s must not be a JSON %s", field, te.Value)
			}
			return nil, invalid("invalid_json", k, "%s cannot be read: %v", k, err)
		}
	}
	return in, nil
}

// includeUsage reads stream_options.include_usage by its exact name (an
// object whose other members have no effect here).
func includeUsage(raw json.RawMessage) (bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return false, nil
	}
	var so map[string]json.RawMessage
	if json.Unmarshal(raw, &so) != nil || so == nil {
		return false, invalid("invalid_type", "stream_options", `stream_options must be an object like {"include_usage": true}`)
	}
	var on *bool
	if v, ok := so["include_usage"]; ok && json.Unmarshal(v, &on) != nil {
		return false, invalid("invalid_type", "stream_options.include_usage", "stream_options.include_usage must be a boolean")
	}
	return on != nil && *on, nil
}

// fieldRules: the chat fields Request reads, those it accepts with no
// effect, and those accepted only at a value that asks for nothing
// (anything else of theirs is refused: Anthropic has no equivalent).
var (
	readFields = func() map[string]bool {
		names := map[string]bool{}
		for k := range (&chatIn{}).targets() {
			names[k] = true
		}
		return names
	}()
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
	in, err := readChat(raw)
	if err != nil {
		return Translated{}, err
	}
	usage, err := includeUsage(in.StreamOptions)
	if err != nil {
		return Translated{}, err
	}
	out := messagesRequest{Model: in.Model}
	if err := translate(in, &out, o); err != nil {
		return Translated{}, err
	}
	b, err := chat.Marshal(&out, chat.Verbatim)
	if err != nil {
		return Translated{}, fmt.Errorf("encoding the Messages request: %w", err)
	}
	return Translated{Body: b, Stream: out.Stream, IncludeUsage: out.Stream && usage}, nil
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

// checkFields refuses every member whose name is not exactly one of a
// chat request's fields (null or not: encoding/json would match
// "max_to\u212Aens" or "MAX_TOKENS" to max_tokens, so a name is read
// exactly or not at all), and one Anthropic has no equivalent for at a
// value that asks for something.
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
		_, neutral := neutralFields[k]
		why, unsupported := unsupportedWhy[k]
		if !neutral && !unsupported {
			return unknownField(k)
		}
		var c bytes.Buffer
		_ = json.Compact(&c, raw[k])
		if c.String() == "null" || (neutral && (contains(neutralFields[k], c.String()) || isZeroNumber(c.String(), neutralFields[k]))) {
			continue
		}
		if unsupported {
			return invalid("unsupported_parameter", k, "%s is not supported by this model's API: %s", k, why)
		}
		return invalid("unsupported_parameter", k, "%s is not supported by this model's API (Anthropic's Messages): only %s is accepted", k, strings.Join(neutralFields[k], " or "))
	}
	return nil
}

// unknownField is the refusal of a member that is no chat field: one
// spelled as a field in another case (or with a Unicode letter that
// folds to one) says which, since names are read exactly.
func unknownField(k string) error {
	for name := range readFields {
		if strings.EqualFold(k, name) {
			return invalid("unknown_field", k, "%q: unknown field (field names are read exactly: this one is written %q)", k, name)
		}
	}
	return invalid("unknown_field", k, "%q: unknown field (not a chat-completion field arr translates for Anthropic models)", k)
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

// maxTokens sets max_tokens: the request's, at most the model's limit
// (MaxOutputTokens when it is not known), else the model's limit
// (DefaultMaxTokens when it is not known).
func maxTokens(in *chatIn, out *messagesRequest, o Options) error {
	n, field := in.MaxCompletionTokens, "max_completion_tokens"
	if n == nil {
		n, field = in.MaxTokens, "max_tokens"
	}
	limit := o.MaxTokens
	if limit <= 0 {
		limit = MaxOutputTokens
	}
	switch {
	case n == nil && o.MaxTokens > 0:
		out.MaxTokens = o.MaxTokens
	case n == nil:
		out.MaxTokens = DefaultMaxTokens
	case *n < 1:
		return invalid("invalid_value", field, "%s must be at least 1", field)
	case *n > limit:
		out.MaxTokens = limit
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
