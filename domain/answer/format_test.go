package answer_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
)

func TestParseResponseFormat(t *testing.T) {
	deep := `{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"array","items":`, 40) + `{}` + strings.Repeat(`}`, 40) + `}}`
	big := `{"type":"object","description":"` + strings.Repeat("x", answer.MaxSchemaBytes) + `"}`
	tests := []struct {
		name, raw string
		want      answer.ResponseFormat
		code      string
		field     string
	}{
		{name: "absent", raw: ``},
		{name: "null", raw: `null`},
		{name: "text is prose", raw: `{"type":"text"}`},
		{name: "json_schema", raw: `{"type":"json_schema","json_schema":{"name":"answer_1","schema":{ "type" : "object" },"strict":true}}`,
			want: answer.ResponseFormat{Type: answer.FormatJSONSchema, Name: "answer_1", Strict: true, Schema: `{"type":"object"}`}},
		{name: "with a description", raw: `{"type":"json_schema","json_schema":{"name":"a","description":"d","schema":{}}}`,
			want: answer.ResponseFormat{Type: answer.FormatJSONSchema, Name: "a", Description: "d", Schema: `{}`}},
		{name: "not an object", raw: `"json_schema"`, code: "response_format_invalid", field: "response_format"},
		{name: "no type", raw: `{}`, code: "response_format_invalid", field: "response_format.type"},
		{name: "type of another kind", raw: `{"type":1}`, code: "response_format_invalid", field: "response_format"},
		{name: "unknown type", raw: `{"type":"xml"}`, code: "response_format_invalid", field: "response_format.type"},
		{name: "json_object", raw: `{"type":"json_object"}`, code: "response_format_unsupported", field: "response_format.type"},
		{name: "regex", raw: `{"type":"regex","regex":{"regex":"a"}}`, code: "unknown_field", field: "response_format.regex"},
		{name: "unknown member", raw: `{"type":"json_schema","extra":1}`, code: "unknown_field", field: "response_format.extra"},
		{name: "text with a schema", raw: `{"type":"text","json_schema":{"name":"a","schema":{}}}`, code: "response_format_invalid", field: "response_format.json_schema"},
		{name: "json_schema missing", raw: `{"type":"json_schema"}`, code: "response_format_invalid", field: "response_format.json_schema"},
		{name: "no name", raw: `{"type":"json_schema","json_schema":{"schema":{}}}`, code: "response_format_invalid", field: "response_format.json_schema.name"},
		{name: "a name with a space", raw: `{"type":"json_schema","json_schema":{"name":"a b","schema":{}}}`, code: "response_format_invalid", field: "response_format.json_schema.name"},
		{name: "a long name", raw: `{"type":"json_schema","json_schema":{"name":"` + strings.Repeat("a", 65) + `","schema":{}}}`, code: "response_format_invalid", field: "response_format.json_schema.name"},
		{name: "unknown json_schema member", raw: `{"type":"json_schema","json_schema":{"name":"a","schema":{},"x":1}}`, code: "unknown_field", field: "response_format.json_schema.x"},
		{name: "strict not a boolean", raw: `{"type":"json_schema","json_schema":{"name":"a","schema":{},"strict":"yes"}}`, code: "response_format_invalid", field: "response_format.json_schema"},
		{name: "no schema", raw: `{"type":"json_schema","json_schema":{"name":"a"}}`, code: "schema_invalid", field: "response_format.json_schema.schema"},
		{name: "schema an array", raw: `{"type":"json_schema","json_schema":{"name":"a","schema":[1]}}`, code: "schema_invalid", field: "response_format.json_schema.schema"},
		{name: "schema a string", raw: `{"type":"json_schema","json_schema":{"name":"a","schema":"{}"}}`, code: "schema_invalid", field: "response_format.json_schema.schema"},
		{name: "schema too deep", raw: `{"type":"json_schema","json_schema":{"name":"a","schema":` + deep + `}}`, code: "schema_too_deep", field: "response_format.json_schema.schema"},
		{name: "schema too large", raw: `{"type":"json_schema","json_schema":{"name":"a","schema":` + big + `}}`, code: "schema_too_large", field: "response_format.json_schema.schema"},
		{name: "a NUL in the description", raw: `{"type":"json_schema","json_schema":{"name":"a","description":"a\u0000b","schema":{}}}`, field: "response_format.json_schema.description"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := answer.ParseResponseFormat([]byte(tc.raw))
			if tc.field == "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) || de.Field != tc.field || (tc.code != "" && de.Code != tc.code) {
				t.Fatalf("got %+v, %v; want %s on %s", got, err, tc.code, tc.field)
			}
		})
	}
}

// TestCacheKeyHoldsTheSchema: another schema, name or strictness is
// another answer; prose keeps the key it had.
func TestCacheKeyHoldsTheSchema(t *testing.T) {
	r, err := answer.ParseRequest("How long does the ferry take?", true, "", "")
	if err != nil {
		t.Fatal(err)
	}
	prose := r.CacheKey()
	keys := map[string]string{"prose": prose}
	for name, f := range map[string]answer.ResponseFormat{
		"schema a":   {Type: answer.FormatJSONSchema, Name: "a", Schema: `{"type":"object"}`},
		"schema b":   {Type: answer.FormatJSONSchema, Name: "a", Schema: `{"type":"array"}`},
		"other name": {Type: answer.FormatJSONSchema, Name: "b", Schema: `{"type":"object"}`},
		"strict":     {Type: answer.FormatJSONSchema, Name: "a", Strict: true, Schema: `{"type":"object"}`},
	} {
		r.Format = f
		k := r.CacheKey()
		for other, ok := range keys {
			if ok == k {
				t.Fatalf("%s and %s share the key %s", name, other, k)
			}
		}
		keys[name] = k
	}
	r.Format = answer.ResponseFormat{}
	if r.CacheKey() != prose {
		t.Fatal("prose changed its key")
	}
}

func TestJSONCitationSpans(t *testing.T) {
	doc := `{"answer":"The ferry leaves at nine [1]. It takes forty minutes [2].","cite":[1],"é":"a \"q\" [3]","key [4]" : "no marker"}`
	got := answer.JSONCitationSpans(doc)
	runes := []rune(doc)
	var texts []string
	for _, c := range got {
		texts = append(texts, fmt.Sprintf("%d:%s", c.Index, string(runes[c.Start:c.End])))
	}
	want := []string{"1:The ferry leaves at nine", "2:It takes forty minutes", `3:a \"q\"`}
	if !reflect.DeepEqual(texts, want) {
		t.Fatalf("got %q, want %q", texts, want)
	}
}
