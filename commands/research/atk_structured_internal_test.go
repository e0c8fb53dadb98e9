package research

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/answer"
)

// fanoutSchema is a small schema (about 60 bytes a level, 2 levels of
// JSON nesting) whose validation costs 2^levels evaluations: each $defs
// entry refers twice to the next through allOf, and $ref shares the
// subschema, so neither MaxSchemaBytes nor MaxSchemaDepth bounds the
// work. leaf is the last entry.
func fanoutSchema(levels int, leaf string) string {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := 0; i < levels; i++ {
		fmt.Fprintf(&b, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":%s}}`, levels, leaf)
	return b.String()
}

// TestAtkStructuredSchemaFanoutRefused: a 2.6 KB schema whose validation
// of any reply is 2^40 subschema evaluations (a 1.2 KB one at 18 levels
// already takes 2.5 s of CPU; with a failing leaf every evaluation also
// keeps an error, 83 MB at 16 levels, doubling per level) is accepted by
// ParseResponseFormat. It must be refused up front (a 400 naming the
// schema) because the validation in checkReply cannot be bounded or
// canceled afterwards.
func TestAtkStructuredSchemaFanoutRefused(t *testing.T) {
	schema := fanoutSchema(40, `{"type":"object"}`)
	raw := `{"type":"json_schema","json_schema":{"name":"fanout","schema":` + schema + `}}`
	f, err := ParseResponseFormat([]byte(raw))
	if err == nil {
		t.Fatalf("a %d-byte schema of 2^40 evaluations per reply was accepted: %+v", len(f.Schema), f.Name)
	}
}

// TestAtkStructuredReplyDuplicateKeys: a reply with a member twice is
// validated on the last value (Go's decoder) and returned as the text
// the model wrote, so a client whose JSON parser keeps the first value
// (or refuses duplicates) receives a document the schema did not pass.
// A source's text telling the model to repeat a key is enough.
func TestAtkStructuredReplyDuplicateKeys(t *testing.T) {
	sch, err := compileSchema(answer.ResponseFormat{Type: answer.FormatJSONSchema, Name: "a",
		Schema: `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`})
	if err != nil {
		t.Fatal(err)
	}
	got, err := checkReply(sch, `{"n":"<script>not an integer</script>","n":1}`)
	if err == nil {
		t.Fatalf("a reply with a duplicate member was taken as valid and served as %q", got)
	}
}

// TestAtkStructuredSchemaHugeExponent: a JSON number like 1e-999999 in a
// schema is turned into an exact big.Rat by the compiler (10^999999
// computed), about 0.35 s of CPU each at parse time — 50 of them in a
// 1.3 KB schema took 15.5 s in ParseResponseFormat, and 16 KiB holds
// ~650 (minutes a request). The parse runs in the handler's decoding,
// before the plan check and before model_required, so any key on an arr
// with no language model burns a core; the compile runs again in
// writeStructured, and validating a reply number against it took 47 s.
// A number the schema cannot need (an exponent beyond float64's) must be
// refused before compiling.
func TestAtkStructuredSchemaHugeExponent(t *testing.T) {
	raw := `{"type":"json_schema","json_schema":{"name":"big","schema":{"type":"object","properties":{"a":{"multipleOf":1e-999999}}}}}`
	if _, err := ParseResponseFormat([]byte(raw)); err == nil {
		t.Fatal("a schema number of exponent -999999 (10^999999 computed to compile it) was accepted")
	}
}

// TestAtkStructuredReplyHugeExponent: the reply side of the same cause.
// A number like 1e999999 in the model's reply (a source's text can ask
// for it) is made an exact big.Rat to check "type":"integer", computing
// 10^999999; a 1,500-token reply holds over a hundred of them. It is
// taken as a valid integer and served. A reply number beyond float64's
// range must be refused before validation (and so retried).
func TestAtkStructuredReplyHugeExponent(t *testing.T) {
	sch, err := compileSchema(answer.ResponseFormat{Type: answer.FormatJSONSchema, Name: "a",
		Schema: `{"type":"object","additionalProperties":{"type":"integer"}}`})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := checkReply(sch, `{"a":1e999999,"b":1e999998}`); err == nil {
		t.Fatalf("a reply of numbers 1e999999 was validated (10^999999 computed each) and served as %q", got)
	}
}
