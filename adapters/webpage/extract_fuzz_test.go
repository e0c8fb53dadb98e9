package webpage_test

import (
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/domain/text"
)

// FuzzExtract feeds Extract any bytes as HTML, Markdown or text: it must
// not panic, and what it returns is clean text, with white space
// collapsed in every block but code.
func FuzzExtract(f *testing.F) {
	f.Add(sphinxPage, uint8(0))
	f.Add(`<table><tr><td colspan="3" rowspan="2">a</td></tr><tr><th>b</th></tr></table><dl><dt>x<dd><pre>y</pre>`, uint8(0))
	f.Add("# T\n\n```go\nx\n```\n| a | b |\n|---|---|\n| [c](d) | `e` |\n- item\n", uint8(1))
	f.Add("a\x00b\n\nc", uint8(2))
	f.Fuzz(func(t *testing.T, body string, kind uint8) {
		ct := [...]string{"text/html", "text/markdown", "text/plain"}[kind%3]
		p, err := webpage.Extract(webpage.Raw{URL: "u", ContentType: ct, Body: []byte(body)})
		if err != nil {
			return
		}
		if !text.Valid(p.Title) || !text.Valid(p.Text) {
			t.Fatalf("title %q or text %q not clean", p.Title, p.Text)
		}
		for _, s := range p.Sections {
			for _, h := range s.Heading {
				if !collapsed(h) || h == "" {
					t.Fatalf("heading %q", h)
				}
			}
			for _, b := range s.Blocks {
				if !text.Valid(b.Text) || b.Text == "" || (b.Kind != webpage.Code && !collapsed(b.Text)) {
					t.Fatalf("%s block %q", b.Kind, b.Text)
				}
			}
		}
	})
}

func collapsed(s string) bool {
	return strings.Join(strings.Fields(s), " ") == s
}
