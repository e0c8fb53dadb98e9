package answer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/text"
)

// Bounds of a response_format's json_schema.
const (
	// MaxSchemaBytes bounds the schema's JSON text as sent.
	MaxSchemaBytes = 16 << 10
	// MaxSchemaDepth bounds how deeply the schema's JSON objects and
	// arrays nest.
	MaxSchemaDepth = 32
	// MaxFormatDescriptionChars bounds json_schema.description.
	MaxFormatDescriptionChars = 1000
)

// FormatType is what shape an answer is written in.
type FormatType string

// Format types. Only FormatJSONSchema changes anything: FormatText is the
// default, prose with citation markers.
const (
	FormatText       FormatType = "text"
	FormatJSONSchema FormatType = "json_schema"
)

// ResponseFormat is the shape an answer is asked in (a request's
// response_format). The zero value is prose; Type FormatJSONSchema asks a
// language model for one JSON document valid against Schema. Whether the
// schema compiles is checked by the command that uses it
// (research.ParseResponseFormat): domain code cannot read JSON Schema.
type ResponseFormat struct {
	// Type is FormatJSONSchema when set ("" is prose).
	Type FormatType `json:"type"`
	// Name is json_schema.name: letters, digits, "_" and "-", at most 64.
	Name string `json:"name"`
	// Description is json_schema.description, if any.
	Description string `json:"description,omitempty"`
	// Strict is json_schema.strict, passed to the model as given.
	Strict bool `json:"strict,omitempty"`
	// Schema is the JSON Schema as compact JSON text (a JSON object).
	Schema string `json:"schema"`
	// Compiled is the command's compiled form of Schema
	// (research.ParseResponseFormat), carried with the request so the
	// schema is checked and compiled once; nil until then. It is neither
	// recorded nor part of the cache key.
	Compiled any `json:"-"`
}

// Structured reports whether f asks for JSON against a schema.
func (f ResponseFormat) Structured() bool { return f.Type == FormatJSONSchema }

// key is f's part of the cache key: "" for prose, so every earlier key
// stays what it was.
func (f ResponseFormat) key() string {
	if !f.Structured() {
		return ""
	}
	return fmt.Sprintf("\x00format=json_schema\x00name=%s\x00strict=%t\x00desc=%s\x00schema=%s", f.Name, f.Strict, f.Description, f.Schema)
}

var reSchemaName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

const formatShape = `{"type":"json_schema","json_schema":{"name":"…","schema":{…},"strict":true}}`

// ParseResponseFormat reads a request's response_format: absent, null or
// {"type":"text"} is prose (the zero value); {"type":"json_schema",
// "json_schema":{"name","schema","description"?,"strict"?}} asks for JSON
// against the schema, which must be a JSON object of at most
// MaxSchemaBytes nesting at most MaxSchemaDepth deep. json_object and
// regex are refused (response_format_unsupported), as is anything else,
// with a validation error naming the field.
func ParseResponseFormat(raw json.RawMessage) (ResponseFormat, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return ResponseFormat{}, nil
	}
	var f struct {
		Type       *string         `json:"type"`
		JSONSchema json.RawMessage `json:"json_schema"`
	}
	if err := strictDecode(raw, &f); err != nil {
		return ResponseFormat{}, formatError("response_format", err, "response_format must be an object like "+formatShape)
	}
	if f.Type == nil {
		return ResponseFormat{}, domain.Invalid("response_format_invalid", "response_format.type", "response_format.type is required: text or json_schema, as in %s", formatShape)
	}
	switch t := *f.Type; t {
	case string(FormatText):
		if len(f.JSONSchema) > 0 && string(f.JSONSchema) != "null" {
			return ResponseFormat{}, domain.Invalid("response_format_invalid", "response_format.json_schema", "response_format.json_schema is given only with type json_schema, not with type text")
		}
		return ResponseFormat{}, nil
	case string(FormatJSONSchema):
		return parseJSONSchema(f.JSONSchema)
	case "json_object", "regex":
		return ResponseFormat{}, domain.Invalid("response_format_unsupported", "response_format.type",
			"response_format type %s is not supported: send type json_schema with a schema (any JSON object is {\"type\":\"object\"}), as in %s", t, formatShape)
	default:
		return ResponseFormat{}, domain.Invalid("response_format_invalid", "response_format.type", "response_format.type must be text or json_schema; got %q", text.Bound(t, 40))
	}
}

// parseJSONSchema reads response_format.json_schema.
func parseJSONSchema(raw json.RawMessage) (ResponseFormat, error) {
	const field = "response_format.json_schema"
	if len(raw) == 0 || string(raw) == "null" {
		return ResponseFormat{}, domain.Invalid("response_format_invalid", field, "%s is required with type json_schema: %s", field, formatShape)
	}
	var js struct {
		Name        *string         `json:"name"`
		Description *string         `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Strict      *bool           `json:"strict"`
	}
	if err := strictDecode(raw, &js); err != nil {
		return ResponseFormat{}, formatError(field, err, field+" must be an object with a string name, a schema object and an optional boolean strict, as in "+formatShape)
	}
	if js.Name == nil || !reSchemaName.MatchString(*js.Name) {
		return ResponseFormat{}, domain.Invalid("response_format_invalid", field+".name", "%s.name is required: 1 to 64 letters, digits, underscores or dashes", field)
	}
	f := ResponseFormat{Type: FormatJSONSchema, Name: *js.Name, Strict: js.Strict != nil && *js.Strict}
	if js.Description != nil {
		if err := text.Check(field+".description", *js.Description, MaxFormatDescriptionChars); err != nil {
			return ResponseFormat{}, err
		}
		f.Description = *js.Description
	}
	schema, err := checkSchemaText(js.Schema)
	if err != nil {
		return ResponseFormat{}, err
	}
	f.Schema = schema
	return f, nil
}

// checkSchemaText checks the schema's JSON text (an object, bounded in
// size and depth) and returns it compact.
func checkSchemaText(raw json.RawMessage) (string, error) {
	const field = "response_format.json_schema.schema"
	if len(raw) == 0 || string(raw) == "null" {
		return "", domain.Invalid("schema_invalid", field, "%s is required: a JSON Schema object, like {\"type\":\"object\",\"properties\":{…}}", field)
	}
	if len(raw) > MaxSchemaBytes {
		return "", domain.Invalid("schema_too_large", field, "%s is %d bytes; at most %d are taken", field, len(raw), MaxSchemaBytes)
	}
	if raw[0] != '{' {
		return "", domain.Invalid("schema_invalid", field, "%s must be a JSON object (a JSON Schema), like {\"type\":\"object\"}", field)
	}
	if d := jsonDepth(raw); d > MaxSchemaDepth {
		return "", domain.Invalid("schema_too_deep", field, "%s nests %d levels deep; at most %d are taken", field, d, MaxSchemaDepth)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", domain.Invalid("schema_invalid", field, "%s is not valid JSON: %v", field, err)
	}
	return b.String(), nil
}

// jsonDepth is how deeply raw's objects and arrays nest (raw is valid
// JSON: a member of a document that decoded).
func jsonDepth(raw []byte) int {
	dec := json.NewDecoder(bytes.NewReader(raw))
	depth, most := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return most
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			most = max(most, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

// strictDecode decodes one JSON object into v refusing unknown members.
func strictDecode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data after the object")
	}
	return nil
}

// formatError is the validation error of a member of field that did not
// decode: an unknown member is named, anything else says shape.
func formatError(field string, err error, shape string) error {
	if name, ok := strings.CutPrefix(err.Error(), `json: unknown field "`); ok {
		name = strings.TrimSuffix(name, `"`)
		return domain.Invalid("unknown_field", field+"."+name, "%s has an unknown field %q: %s", field, text.Bound(name, 40), shape)
	}
	return domain.Invalid("response_format_invalid", field, "%s", shape)
}

// StructuredOutputInvalid: the language model's reply was not JSON valid
// against the request's schema, on the first try nor on the retry that
// was told what was wrong. The answer service answers it 502
// structured_output_invalid.
type StructuredOutputInvalid struct {
	// Reason is the last reply's validation error.
	Reason string
}

func (e *StructuredOutputInvalid) Error() string {
	return "the language model's reply was not valid against the response_format schema after one retry: " + e.Reason
}

// JSONCitationSpans is CitationSpans for a structured answer (JSON text):
// only markers inside JSON strings are citations ("[1]" in
// "sources_used":[1] is an array), each supporting the clause of its own
// string that ends at it. Offsets are in code points of the whole text.
func JSONCitationSpans(doc string) []Citation {
	out := []Citation{}
	runes := []rune(doc)
	for i := 0; i < len(runes); i++ {
		if runes[i] != '"' {
			continue
		}
		start := i + 1
		for i++; i < len(runes) && runes[i] != '"'; i++ {
			if runes[i] == '\\' {
				i++
			}
		}
		if isKey(runes, i+1) {
			continue // a member's name is no text of the answer
		}
		for _, c := range CitationSpans(string(runes[start:min(i, len(runes))])) {
			c.Start, c.End = c.Start+start, c.End+start
			out = append(out, c)
		}
	}
	return out
}

// isKey reports whether the string that ended before runes[i] is a
// member's name: the next character but white space is a colon.
func isKey(runes []rune, i int) bool {
	for ; i < len(runes); i++ {
		switch runes[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}
