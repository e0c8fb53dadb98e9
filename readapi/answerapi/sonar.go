package answerapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/text"
	"github.com/arr-dev/arr/readapi/httpx"
)

// sonarPath is the Sonar-compatible route (Perplexity's chat completions
// shape): its errors are in the OpenAI error shape (fail).
const sonarPath = "/v1/chat/completions"

// sonarModel is what a Sonar model name asks of the answer service.
type sonarModel struct {
	Tier answer.Tier
	Mode answer.Mode
}

// sonarModels maps Perplexity's model names to tiers and modes: sonar is
// the free quick answer; -pro asks for the pro tier (more sources, the
// gateway's quality floor); the reasoning and deep-research models ask for
// deep mode (sub-questions, several searches). Pro tier and deep mode need
// the Pro plan.
var sonarModels = map[string]sonarModel{
	"sonar":               {answer.Free, answer.Quick},
	"sonar-pro":           {answer.Pro, answer.Quick},
	"sonar-reasoning":     {answer.Free, answer.Deep},
	"sonar-reasoning-pro": {answer.Pro, answer.Deep},
	"sonar-deep-research": {answer.Pro, answer.Deep},
}

// SonarModels are the model names POST /v1/chat/completions knows,
// sorted (the OpenAPI document's enum).
func SonarModels() []string { return sonarModelNames() }

// SonarRecencies are the values of search_recency_filter, shortest first.
func SonarRecencies() []string { return []string{"hour", "day", "week", "month", "year"} }

// sonarModelNames are the known model names, sorted.
func sonarModelNames() []string {
	out := make([]string, 0, len(sonarModels))
	for n := range sonarModels {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// sonarRecency maps search_recency_filter to the answer API's time_range.
// Published dates are days (UTC), so "hour" is the window of "day": from
// yesterday to today.
var sonarRecency = map[string]answer.TimeRange{
	"hour": answer.PastDay, "day": answer.PastDay, "week": answer.PastWeek, "month": answer.PastMonth, "year": answer.PastYear,
}

// sonarDateLayout is Perplexity's date filter format, %m/%d/%Y: month and
// day with or without a leading zero ("3/1/2025", "03/01/2025").
const sonarDateLayout = "1/2/2006"

// sonarBody is the body of POST /v1/chat/completions. Every field
// Perplexity's or OpenAI's clients send for a chat is known; the sampling
// fields are type-checked and ignored (the answer service writes the
// answer its own way); any other field is refused (400 unknown_field).
type sonarBody struct {
	Model                  *string         `json:"model"`
	Messages               json.RawMessage `json:"messages"`
	Stream                 json.RawMessage `json:"stream"`
	SearchDomainFilter     json.RawMessage `json:"search_domain_filter"`
	SearchRecencyFilter    json.RawMessage `json:"search_recency_filter"`
	SearchAfterDateFilter  json.RawMessage `json:"search_after_date_filter"`
	SearchBeforeDateFilter json.RawMessage `json:"search_before_date_filter"`
	WebSearchOptions       json.RawMessage `json:"web_search_options"`
	// ResponseFormat is read by research.ParseResponseFormat, as on
	// /api/v1/answer: json_schema asks for the answer as JSON.
	ResponseFormat json.RawMessage `json:"response_format"`

	// Accepted and ignored.
	Temperature            *float64        `json:"temperature"`
	TopP                   *float64        `json:"top_p"`
	TopK                   *float64        `json:"top_k"`
	MaxTokens              *float64        `json:"max_tokens"`
	MaxCompletionTokens    *float64        `json:"max_completion_tokens"`
	PresencePenalty        *float64        `json:"presence_penalty"`
	FrequencyPenalty       *float64        `json:"frequency_penalty"`
	N                      *float64        `json:"n"`
	User                   *string         `json:"user"`
	StreamOptions          json.RawMessage `json:"stream_options"`
	ReturnImages           *bool           `json:"return_images"`
	ReturnRelatedQuestions *bool           `json:"return_related_questions"`
}

// sonarRequest is a parsed Sonar request.
type sonarRequest struct {
	req    answer.Request
	model  string
	stream bool
}

// ParseSonar reads the body of POST /v1/chat/completions: the answer
// request it asks, the model named and whether it streams.
func ParseSonar(r io.Reader, now time.Time) (answer.Request, string, bool, error) {
	sr, err := parseSonar(r, now)
	return sr.req, sr.model, sr.stream, err
}

// parseSonar reads the body of POST /v1/chat/completions into the answer
// request it asks (the last user message is the question, the turns
// before it its conversation), with the model named and whether it
// streams. Errors are 400s naming the Sonar field.
func parseSonar(r io.Reader, now time.Time) (sonarRequest, error) {
	raw, err := readSonarJSON(r)
	if err != nil {
		return sonarRequest{}, err
	}
	var b sonarBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return sonarRequest{}, sonarDecodeError(err)
	}
	if dec.More() {
		return sonarRequest{}, domain.Invalid("invalid_json", "", "the body must be one JSON object")
	}
	if b.User != nil {
		if err := text.Check("user", *b.User, 0); err != nil {
			return sonarRequest{}, err
		}
	}
	if b.N != nil && *b.N != 1 {
		return sonarRequest{}, domain.Invalid("invalid_n", "n", "n must be 1: one answer is written per request")
	}
	var out sonarRequest
	if out.model, err = checkModel(b.Model); err != nil {
		return sonarRequest{}, err
	}
	format, err := research.ParseResponseFormat(b.ResponseFormat)
	if err != nil {
		return sonarRequest{}, err
	}
	if out.req, err = sonarQuestion(b.Messages, sonarModels[out.model]); err != nil {
		return sonarRequest{}, err
	}
	out.req.Format = format
	if out.req.Filters, err = sonarFilters(b, now); err != nil {
		return sonarRequest{}, err
	}
	if out.req.ContextSize, err = sonarContextSize(b.WebSearchOptions); err != nil {
		return sonarRequest{}, err
	}
	out.stream, err = parseStream(b.Stream)
	return out, err
}

// readSonarJSON reads the body (duplicate keys refused, as every body of
// arr's APIs).
func readSonarJSON(r io.Reader) ([]byte, error) {
	var raw []byte
	var err error
	if raw, err = io.ReadAll(r); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, domain.Invalid("invalid_json", "", `the body is empty: send a JSON object like {"model":"sonar","messages":[{"role":"user","content":"…"}]}`)
	}
	if err := httpx.UniqueKeys(raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// sonarDecodeError is the 400 of a body that does not decode: an unknown
// field, a field of the wrong type, or not JSON.
func sonarDecodeError(err error) error {
	if f := httpx.UnknownField(err); f != "" {
		return domain.Invalid("unknown_field", f, "unknown field %q: see /openapi.json for the fields POST /v1/chat/completions takes (model, messages, stream, search_domain_filter, search_recency_filter, search_after_date_filter, search_before_date_filter, web_search_options, response_format, and the sampling fields it ignores)", f)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		want := jsonKind(te.Type.Kind().String())
		if got, ok := strings.CutPrefix(te.Value, "number "); ok && want == "number" {
			// The right JSON type, a value no float64 holds.
			return domain.Invalid("invalid_"+te.Field, te.Field, "%s is out of range: %s is not a number arr can read (at most about 1.8e308)", te.Field, got)
		}
		return domain.Invalid("invalid_"+te.Field, te.Field, "%s must be a JSON %s, got a %s", te.Field, want, te.Value)
	}
	return domain.Invalid("invalid_json", "", `the body must be a JSON object like {"model":"sonar","messages":[{"role":"user","content":"…"}]}: %v`, err)
}

// jsonKind names a Go kind as a JSON type.
func jsonKind(k string) string {
	switch k {
	case "float64":
		return "number"
	case "bool":
		return "boolean"
	case "ptr", "string":
		return "string"
	}
	return k
}

// checkModel validates the model name.
func checkModel(m *string) (string, error) {
	known := strings.Join(sonarModelNames(), ", ")
	if m == nil || *m == "" {
		return "", domain.Invalid("model_missing", "model", "model is required: one of %s", known)
	}
	if _, ok := sonarModels[*m]; !ok {
		return "", domain.Invalid("invalid_model", "model", "model %q is not known: use one of %s", *m, known)
	}
	return *m, nil
}

// sonarMessage is one chat message: content a string or an array of text
// parts.
type sonarMessage struct {
	Role    *string         `json:"role"`
	Content json.RawMessage `json:"content"`
	// Name is OpenAI's participant name: accepted, not used.
	Name *string `json:"name"`
}

// sonarQuestion reads messages: system (and developer) messages are
// accepted and not used; the last message must be the user's question;
// the user and assistant turns before it are its conversation.
func sonarQuestion(raw json.RawMessage, m sonarModel) (answer.Request, error) {
	const shape = `an array of messages like [{"role":"user","content":"…"}]`
	if len(raw) == 0 || string(raw) == "null" {
		return answer.Request{}, domain.Invalid("messages_missing", "messages", "messages is required: %s", shape)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return answer.Request{}, domain.Invalid("messages_invalid", "messages", "messages must be %s", shape)
	}
	if len(items) == 0 {
		return answer.Request{}, domain.Invalid("messages_empty", "messages", "messages is empty: the last message must be the user's question")
	}
	if len(items) > 2*answer.MaxTurns+2 {
		return answer.Request{}, domain.Invalid("messages_too_many", "messages", "messages holds %d messages; at most %d earlier turns and the question are read: send the latest ones", len(items), answer.MaxTurns)
	}
	var turns []answer.Message
	for i, it := range items {
		field := fmt.Sprintf("messages[%d]", i)
		role, content, err := sonarTurn(field, it)
		if err != nil {
			return answer.Request{}, err
		}
		switch {
		case i == len(items)-1:
			if role != answer.UserRole {
				return answer.Request{}, domain.Invalid("last_message_not_user", field+".role", "the last message must be the user's question; %s.role is %q", field, role)
			}
			return sonarRequestFor(field, content, turns, m)
		case role == "system" || role == "developer":
		case role == answer.UserRole || role == answer.AssistantRole:
			if err := answer.CheckMessages([]answer.Message{{Role: role, Content: content}}); err != nil {
				return answer.Request{}, renameField(err, "messages[0]", field)
			}
			turns = append(turns, answer.Message{Role: role, Content: content})
		default:
			return answer.Request{}, domain.Invalid("messages_invalid_role", field+".role", "%s.role is %q: it must be system, user or assistant", field, role)
		}
	}
	return answer.Request{}, nil // not reached: the last message returns
}

// sonarRequestFor is the request for the question content (field names
// it) after the turns, with the model's tier and mode.
func sonarRequestFor(field, content string, turns []answer.Message, m sonarModel) (answer.Request, error) {
	req, err := answer.ParseRequest(content, true, string(m.Tier), string(m.Mode))
	if err != nil {
		return answer.Request{}, renameField(err, "q", field+".content")
	}
	if len(turns) > 0 {
		if err := answer.CheckMessages(turns); err != nil {
			return answer.Request{}, err
		}
		req.Messages = turns
	}
	return req, nil
}

// sonarTurn reads one message's role and text: content is a string, or
// an array of {"type":"text","text":"…"} parts, joined by newlines.
func sonarTurn(field string, raw json.RawMessage) (string, string, error) {
	var m sonarMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		if f := httpx.UnknownField(err); f != "" {
			return "", "", domain.Invalid("unknown_field", field+"."+f, "%s has an unknown field %q: a message is {\"role\",\"content\"} (and an optional name)", field, f)
		}
		return "", "", domain.Invalid("messages_invalid", field, "%s must be an object with a string role and a string content", field)
	}
	if m.Role == nil || *m.Role == "" {
		return "", "", domain.Invalid("messages_role_missing", field+".role", "%s.role is missing: system, user or assistant", field)
	}
	if m.Name != nil {
		if err := text.Check(field+".name", *m.Name, 0); err != nil {
			return "", "", err
		}
	}
	content, err := sonarContent(field, m.Content)
	if err != nil {
		return "", "", err
	}
	// Every text decoded is checked, read or not (system and developer
	// content too): the text rule holds for the whole body.
	if err := text.Check(field+".content", content, 0); err != nil {
		return "", "", err
	}
	return *m.Role, content, nil
}

// sonarPart is one part of an array content: {"type":"text","text":"…"},
// nothing else (a member arr does not know, cache_control, is refused).
type sonarPart struct {
	Type string  `json:"type"`
	Text *string `json:"text"`
}

// sonarContent reads a message's content: a string, or an array of text
// parts joined by newlines, each decoded strictly.
func sonarContent(field string, raw json.RawMessage) (string, error) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", domain.Invalid("messages_invalid", field+".content", "%s.content must be a string", field)
		}
		return s, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || len(raw) == 0 || items == nil {
		return "", domain.Invalid("messages_invalid", field+".content", "%s.content must be a string or an array of text parts like [{\"type\":\"text\",\"text\":\"…\"}]", field)
	}
	texts := make([]string, 0, len(items))
	for j, it := range items {
		pf := fmt.Sprintf("%s.content[%d]", field, j)
		var p sonarPart
		dec := json.NewDecoder(bytes.NewReader(it))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			if f := httpx.UnknownField(err); f != "" && p.Type == "text" {
				return "", domain.Invalid("unknown_field", pf+"."+f, "%s has an unknown field %q: a text part is {\"type\":\"text\",\"text\":\"…\"}", pf, f)
			}
			return "", domain.Invalid("messages_content_not_text", pf, "%s is not a text part: only text is read (type \"text\" with a string text)", pf)
		}
		if p.Type != "text" || p.Text == nil {
			return "", domain.Invalid("messages_content_not_text", pf, "%s is not a text part: only text is read (type \"text\" with a string text)", pf)
		}
		texts = append(texts, *p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// sonarFilters reads the search filters into the answer API's filters:
// search_domain_filter (names to keep; a name prefixed with "-" is one to
// drop), search_recency_filter, and search_after_date_filter /
// search_before_date_filter (%m/%d/%Y).
func sonarFilters(b sonarBody, now time.Time) (answer.Filters, error) {
	var in answer.FilterInput
	names, err := stringsField("search_domain_filter", b.SearchDomainFilter)
	if err != nil {
		return answer.Filters{}, renameMessage(err, "host names, like [\"example.com\"]", "host names, like [\"example.com\", \"-example.org\"]")
	}
	if len(names) > answer.MaxDomains {
		return answer.Filters{}, domain.Invalid("search_domain_filter_too_many", "search_domain_filter", "search_domain_filter holds %d entries; at most %d are allowed", len(names), answer.MaxDomains)
	}
	for _, n := range names {
		if d, ok := strings.CutPrefix(n, "-"); ok {
			in.ExcludeDomains = append(in.ExcludeDomains, d)
		} else {
			in.IncludeDomains = append(in.IncludeDomains, n)
		}
	}
	in.IncludeDomains, in.ExcludeDomains = asciiNames(in.IncludeDomains), asciiNames(in.ExcludeDomains)
	recency, err := stringField("search_recency_filter", b.SearchRecencyFilter)
	if err != nil {
		return answer.Filters{}, err
	}
	if recency != "" {
		tr, ok := sonarRecency[recency]
		if !ok {
			return answer.Filters{}, domain.Invalid("invalid_search_recency_filter", "search_recency_filter", "search_recency_filter must be %s; got %q", strings.Join(SonarRecencies(), ", "), recency)
		}
		in.TimeRange = string(tr)
	}
	if in.StartDate, err = sonarDate("search_after_date_filter", b.SearchAfterDateFilter); err != nil {
		return answer.Filters{}, err
	}
	if in.EndDate, err = sonarDate("search_before_date_filter", b.SearchBeforeDateFilter); err != nil {
		return answer.Filters{}, err
	}
	if recency != "" && (in.StartDate != "" || in.EndDate != "") {
		return answer.Filters{}, domain.Invalid("recency_with_dates", "search_recency_filter", "send either search_recency_filter or search_after_date_filter/search_before_date_filter, not both")
	}
	if in.StartDate != "" && in.EndDate != "" && in.StartDate > in.EndDate {
		return answer.Filters{}, domain.Invalid("after_date_after_before_date", "search_after_date_filter", "search_after_date_filter is after search_before_date_filter; the window is inclusive, so it must be on or before it")
	}
	f, err := answer.ParseFilters(in, now)
	var de *domain.Error
	if errors.As(err, &de) && de.Code == "domain_in_both_lists" {
		name, _, _ := strings.Cut(de.Message, " is in both")
		return answer.Filters{}, domain.Invalid("domain_allowed_and_denied", "search_domain_filter", "search_domain_filter both allows and denies %s (with and without a leading -); name it once", name)
	}
	if err != nil {
		err = renameField(err, "include_domains", "search_domain_filter")
		err = renameField(err, "exclude_domains", "search_domain_filter")
	}
	return f, err
}

// sonarDate reads a %m/%d/%Y date filter as YYYY-MM-DD ("" when absent).
func sonarDate(field string, raw json.RawMessage) (string, error) {
	s, err := stringField(field, raw)
	if err != nil || s == "" {
		return "", err
	}
	t, err := time.Parse(sonarDateLayout, strings.TrimSpace(s))
	if err != nil {
		return "", domain.Invalid("invalid_"+field, field, "%s must be a date %%m/%%d/%%Y, like 3/1/2025 or 03/01/2025; got %q", field, s)
	}
	return t.Format(answer.DateLayout), nil
}

// sonarContextSize reads web_search_options.search_context_size (other
// web_search_options, such as user_location, are accepted and not used).
func sonarContextSize(raw json.RawMessage) (answer.ContextSize, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return answer.ContextMedium, nil
	}
	var o map[string]json.RawMessage
	if err := json.Unmarshal(raw, &o); err != nil || o == nil {
		return "", domain.Invalid("invalid_web_search_options", "web_search_options", `web_search_options must be an object like {"search_context_size":"low"}`)
	}
	s, err := stringField("web_search_options.search_context_size", o["search_context_size"])
	if err != nil {
		return "", err
	}
	return answer.ParseContextSize("web_search_options.search_context_size", s)
}

// renameField rewrites a validation error's field from one name to
// another: its field, the name that opens its message, and (for a name of
// more than one letter) every other mention of it in its message and
// code.
func renameField(err error, from, to string) error {
	var de *domain.Error
	if !errors.As(err, &de) || (de.Field != from && !strings.HasPrefix(de.Field, from+".")) {
		return err
	}
	out := *de
	out.Field = to + strings.TrimPrefix(de.Field, from)
	if rest, ok := strings.CutPrefix(de.Message, from+" "); ok {
		out.Message = to + " " + rest
	}
	if len(from) > 1 {
		out.Message = strings.ReplaceAll(out.Message, from, to)
		out.Code = strings.ReplaceAll(de.Code, from, to)
	}
	return &out
}

// renameMessage rewrites part of a validation error's message.
func renameMessage(err error, from, to string) error {
	var de *domain.Error
	if !errors.As(err, &de) {
		return err
	}
	out := *de
	out.Message = strings.ReplaceAll(de.Message, from, to)
	return &out
}
