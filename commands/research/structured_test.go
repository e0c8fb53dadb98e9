package research_test

import (
	"errors"
	"testing"

	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain"
)

// TestParseResponseFormatCompiles: a schema is compiled up front; one
// that refers to any document but itself, or is no JSON Schema, is
// refused naming the schema, and nothing is loaded to find out.
func TestParseResponseFormatCompiles(t *testing.T) {
	wrap := func(schema string) []byte {
		return []byte(`{"type":"json_schema","json_schema":{"name":"a","schema":` + schema + `}}`)
	}
	for _, tc := range []struct {
		name, schema string
		ok           bool
	}{
		{"an object schema", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, true},
		{"a local $ref", `{"$defs":{"s":{"type":"string"}},"type":"object","properties":{"a":{"$ref":"#/$defs/s"}}}`, true},
		{"the 2020-12 meta-schema named", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, true},
		{"a remote $ref", `{"type":"object","properties":{"a":{"$ref":"http://127.0.0.1:1/schema.json"}}}`, false},
		{"a relative $ref", `{"type":"object","properties":{"a":{"$ref":"other.json"}}}`, false},
		{"a file $ref", `{"$ref":"file:///etc/passwd"}`, false},
		{"an unknown $schema", `{"$schema":"http://127.0.0.1:1/meta","type":"object"}`, false},
		{"a dangling local $ref", `{"$ref":"#/$defs/missing"}`, false},
		{"a type that is no type", `{"type":"strin"}`, false},
		{"a pattern that is no regexp", `{"type":"string","pattern":"("}`, false},
		{"minimum not a number", `{"minimum":"1"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := research.ParseResponseFormat(wrap(tc.schema))
			if tc.ok {
				if err != nil || !f.Structured() {
					t.Fatalf("%+v %v", f, err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Code != "schema_invalid" || de.Field != "response_format.json_schema.schema" {
				t.Fatalf("got %+v %v, want schema_invalid", f, err)
			}
		})
	}
}
