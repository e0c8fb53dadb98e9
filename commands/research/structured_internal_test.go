package research

import (
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/answer"
)

func TestCheckReply(t *testing.T) {
	sch, err := compileSchema(answer.ResponseFormat{Type: answer.FormatJSONSchema, Name: "a",
		Schema: `{"type":"object","properties":{"answer":{"type":"string"},"n":{"type":"integer"}},"required":["answer","n"],"additionalProperties":false}`})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, reply, want, err string
	}{
		{"valid", `{"answer":"Forty minutes [1].","n":40}`, `{"answer":"Forty minutes [1].","n":40}`, ""},
		{"in a code fence", "```json\n{\"answer\":\"a\",\"n\":1}\n```", `{"answer":"a","n":1}`, ""},
		{"a big integer keeps its digits", `{"answer":"a","n":12345678901234567890}`, `{"answer":"a","n":12345678901234567890}`, ""},
		{"empty", ` `, "", "empty"},
		{"prose", `The ferry takes forty minutes.`, "", "not one JSON document"},
		{"two documents", `{"answer":"a","n":1}{"answer":"b","n":2}`, "", "not one JSON document"},
		{"a missing property", `{"answer":"a"}`, "", "missing property 'n'"},
		{"a wrong type", `{"answer":"a","n":"40"}`, "", "want integer"},
		{"an extra property", `{"answer":"a","n":1,"x":true}`, "", "additional properties 'x'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := checkReply(sch, tc.reply)
			if tc.err == "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %q %v, want %q", got, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("got %q %v, want an error with %q", got, err, tc.err)
			}
		})
	}
}

// TestCheckReplyStrict: a reply is decoded strictly and what is served is
// the validated value re-encoded, not the model's text.
func TestCheckReplyStrict(t *testing.T) {
	sch, err := compileSchema(answer.ResponseFormat{Type: answer.FormatJSONSchema, Name: "a",
		Schema: `{"type":"object","additionalProperties":{"type":["string","number"]}}`})
	if err != nil {
		t.Fatal(err)
	}
	got, err := checkReply(sch, "{ \"b\" : \"x <y>\",\n \"a\": 1.5e3 }")
	if want := `{"b":"x \u003cy\u003e","a":1.5e3}`; err != nil || got != want {
		t.Fatalf("got %q %v, want %q", got, err, want)
	}
	for _, bad := range []string{`{"a":"x","a":"y"}`, `{"a":1e-999999}`, `{"a":-1e400}`} {
		if got, err := checkReply(sch, bad); err == nil {
			t.Fatalf("%s was taken as %q", bad, got)
		}
	}
}
