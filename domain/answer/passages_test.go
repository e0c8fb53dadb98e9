package answer_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arr-dev/arr/domain/answer"
)

func TestSentences(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"two sentences", "The default is 4. It can be raised.", []string{"The default is 4.", "It can be raised."}},
		{"abbreviation", "Use a list, e.g. Python lists. Then sort it.", []string{"Use a list, e.g. Python lists.", "Then sort it."}},
		{"dotted names stay whole", "Call os.path.join() to join paths. It returns a str.", []string{"Call os.path.join() to join paths.", "It returns a str."}},
		{"version numbers", "New in version 3.11. Changed in 3.12.", []string{"New in version 3.11.", "Changed in 3.12."}},
		{"lower case after a period is not a new sentence", "See the x. attribute below.", []string{"See the x. attribute below."}},
		{"newline ends a sentence", "Header line\nThe body starts here.", []string{"Header line", "The body starts here."}},
		{"question and quote", `Is it "done?" Yes.`, []string{`Is it "done?"`, "Yes."}},
		{"an initial", "Written by J. Smith in 2001.", []string{"Written by J. Smith in 2001."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := answer.Sentences(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Sentences(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestPassages(t *testing.T) {
	long := strings.Repeat("This sentence fills a long paragraph. ", 60)
	d := answer.DocumentIndexed{DocID: "d1", Sections: []answer.Section{
		{Heading: []string{"json", "Basic Usage"}, Anchor: "basic-usage", Blocks: []answer.Block{
			{Kind: answer.Prose, Text: "Intro paragraph."},
			{Kind: answer.Term, Text: "json.dumps(obj, *, indent=None)"},
			{Kind: answer.Prose, Text: "Serialize obj to a JSON formatted str."},
			{Kind: answer.Code, Text: ">>> json.dumps([1, 2])"},
			{Kind: answer.Row, Text: "Directive: %Y; Meaning: Year with century"},
		}},
		{Heading: []string{"json", "Long"}, Blocks: []answer.Block{{Kind: answer.Prose, Text: long}}},
		{Heading: []string{"json", "Only code"}, Blocks: []answer.Block{{Kind: answer.Code, Text: "x = 1"}}},
		{Heading: []string{"json", "Command line"}, Blocks: []answer.Block{
			{Kind: answer.Prose, Text: "To pretty-print a file, run the module as a script:"},
			{Kind: answer.Code, Text: "python -m json.tool in.json"},
			{Kind: answer.Code, Text: "python -m json.tool --sort-keys in.json"},
		}},
	}}
	ps := answer.Passages(d)
	if len(ps) < 4 {
		t.Fatalf("got %d passages: %+v", len(ps), ps)
	}
	if ps[0].Text != "Intro paragraph." || ps[0].ID != "d1:0" || ps[0].Anchor != "basic-usage" || !reflect.DeepEqual(ps[0].Heading, []string{"json", "Basic Usage"}) {
		t.Fatalf("first passage %+v", ps[0])
	}
	if !strings.HasPrefix(ps[1].Text, "json.dumps(obj") || !strings.Contains(ps[1].Text, "Serialize obj") || !strings.Contains(ps[1].Text, "%Y") {
		t.Fatalf("a term starts a passage that keeps its description: %+v", ps[1])
	}
	for _, p := range ps {
		if strings.Contains(p.Text, ">>>") || strings.Contains(p.Text, "x = 1") {
			t.Fatalf("code in a passage: %q", p.Text)
		}
		if len(p.Text) > answer.PassageMax {
			t.Fatalf("passage of %d bytes", len(p.Text))
		}
		if p.Heading[1] == "Only code" {
			t.Fatalf("a section of code only made a passage")
		}
		if p.Heading[1] == "Command line" {
			// The one-line command the prose introduces is kept, as a
			// code line; the next code block is not introduced.
			if p.Text != "To pretty-print a file, run the module as a script:\npython -m json.tool in.json" || p.Kinds != "pc" {
				t.Fatalf("introduced command: %q %q", p.Text, p.Kinds)
			}
		}
	}
}

func TestDocIDAndContentHash(t *testing.T) {
	if answer.DocID("http://x/a") == answer.DocID("http://x/b") || answer.DocID("http://x/a") != answer.DocID("http://x/a") {
		t.Fatal("DocID is not a function of the origin")
	}
	s := []answer.Section{{Heading: []string{"h"}, Blocks: []answer.Block{{Kind: answer.Prose, Text: "a"}}}}
	s2 := []answer.Section{{Heading: []string{"h"}, Blocks: []answer.Block{{Kind: answer.Prose, Text: "b"}}}}
	if answer.ContentHash("t", s) == answer.ContentHash("t", s2) || answer.ContentHash("t", s) != answer.ContentHash("t", s) {
		t.Fatal("ContentHash does not follow the content")
	}
}

// A block with no sentence end is cut by bytes, a long title to
// TitleMax, and a document keeps at most MaxPassages passages.
func TestPassagesBounded(t *testing.T) {
	long := strings.Repeat("wordlist ", 5000)
	many := make([]answer.Block, 0, answer.MaxPassages+10)
	for range answer.MaxPassages + 10 {
		many = append(many, answer.Block{Kind: answer.Term, Text: "x"})
	}
	d := answer.DocumentIndexed{DocID: "d", Sections: []answer.Section{{Blocks: []answer.Block{{Text: long}}}, {Blocks: many}}}
	ps := answer.Passages(d)
	if len(ps) != answer.MaxPassages {
		t.Fatalf("%d passages, want %d", len(ps), answer.MaxPassages)
	}
	for _, p := range ps[:10] {
		if len(p.Text) > answer.PassageMax || p.Text == "" {
			t.Fatalf("passage %d is %d bytes", p.Seq, len(p.Text))
		}
	}
	if got := answer.IndexTitle(strings.Repeat("é title ", 100)); len(got) > answer.TitleMax || !utf8.ValidString(got) || got == "" {
		t.Fatalf("title cut to %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}
