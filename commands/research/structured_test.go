package research_test

import (
	"errors"
	"fmt"
	"strings"
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

// TestParseResponseFormatSubset: the closed subset of JSON Schema is
// checked before compiling — an unknown keyword is refused naming it, a
// cycle of $refs or a number beyond a float64 is invalid, and a schema
// that expands past the budget with its $refs inlined is too complex
// (anyOf of a def twice, level after level).
func TestParseResponseFormatSubset(t *testing.T) {
	wrap := func(schema string) []byte {
		return []byte(`{"type":"json_schema","json_schema":{"name":"a","schema":` + schema + `}}`)
	}
	fanout := func(levels int) string {
		var b strings.Builder
		b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
		for i := 0; i < levels; i++ {
			fmt.Fprintf(&b, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
		}
		fmt.Fprintf(&b, `"d%d":{"type":"string"}}}`, levels)
		return b.String()
	}
	for _, tc := range []struct {
		name, schema, code, says string
	}{
		{"allOf", `{"allOf":[{"type":"object"}]}`, "schema_unsupported", `"allOf"`},
		{"a nested unknown keyword", `{"type":"object","properties":{"a":{"type":"string","contentEncoding":"base64"}}}`, "schema_unsupported", `"contentEncoding"`},
		{"$defs below the root", `{"type":"object","properties":{"a":{"$defs":{}}}}`, "schema_unsupported", "root"},
		{"a cycle of $refs", `{"$ref":"#/$defs/a","$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"}]},"b":{"items":{"$ref":"#/$defs/a"}}}}`, "schema_invalid", "cycle"},
		{"a $ref to a pointer", `{"$defs":{"a":{"type":"string"}},"properties":{"b":{"$ref":"#/properties/c"}}}`, "schema_invalid", "$ref"},
		{"an underflowing number", `{"type":"number","minimum":1e-999999}`, "schema_invalid", "out of range"},
		{"an overflowing number", `{"type":"number","maximum":1e999999}`, "schema_invalid", "range"},
		{"a long number", `{"type":"number","maximum":1.00000000000000000000000000000000000001}`, "schema_invalid", "characters"},
		{"a member twice", `{"type":"object","type":"string"}`, "schema_invalid", "twice"},
		{"a fanout of 2^20", fanout(20), "schema_too_complex", "5000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := research.ParseResponseFormat(wrap(tc.schema))
			var de *domain.Error
			if !errors.As(err, &de) || de.Code != tc.code || de.Field != "response_format.json_schema.schema" || !strings.Contains(de.Message, tc.says) {
				t.Fatalf("got %+v %v, want %s saying %q", f, err, tc.code, tc.says)
			}
		})
	}
	// Within the budget: a def used at a few levels is taken, compiled once.
	f, err := research.ParseResponseFormat(wrap(fanout(8)))
	if err != nil || f.Compiled == nil {
		t.Fatalf("a 2^8 expansion: %+v %v", f, err)
	}
}
