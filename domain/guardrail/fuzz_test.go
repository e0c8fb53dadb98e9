package guardrail

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzApply: any text, redacted by every detector and a deny pattern, stays
// valid UTF-8 when it was, and a stream of it in pieces of any size comes
// to the whole text's redaction when the window holds it all.
func FuzzApply(f *testing.F) {
	for _, s := range []string{"card 4111 1111 1111 1111", "mail a@b.co +1 415-555-0132", "GB82 WEST 1234 5698 7654 32",
		"2001:db8::1 10.0.0.1", "123-45-6789 secret-x", "héllo wörld 4111111111111111", strings.Repeat("9", 40)} {
		f.Add(s, 3)
	}
	p := allPII(Redact)
	p.Deny = []DenyRule{{Pattern: `secret-\w+`, Action: Redact, On: OnBoth}}
	for i := range p.PII {
		p.PII[i].On = OnBoth
	}
	e, err := Compile(p)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string, size int) {
		if len(s) > 2000 {
			return
		}
		whole := e.Apply(s, Output).Text
		if utf8.ValidString(s) && !utf8.ValidString(whole) {
			t.Fatalf("%q redacted to invalid UTF-8 %q", s, whole)
		}
		size = 1 + (size&0xff)%64
		st := e.Stream(len(s) + 1)
		var got strings.Builder
		for i := 0; i < len(s); i += size {
			out, _ := st.Write(s[i:min(i+size, len(s))])
			got.WriteString(out)
		}
		out, _ := st.Flush()
		got.WriteString(out)
		if got.String() != whole {
			t.Fatalf("%q in pieces of %d: %q, whole %q", s, size, got.String(), whole)
		}
		small := e.Stream(16)
		for i := 0; i < len(s); i += size {
			_, _ = small.Write(s[i:min(i+size, len(s))])
			if small.Held() > 16+size+len(s) {
				t.Fatalf("holds %d", small.Held())
			}
		}
	})
}
