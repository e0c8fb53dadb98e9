package answer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCitationSpans(t *testing.T) {
	type span struct {
		n    int
		text string
	}
	for _, c := range []struct {
		answer string
		want   []span
	}{
		// Extractive: the marker stands before the sentence's mark.
		{"The ferry leaves at nine [1]. The crossing takes forty minutes [2].",
			[]span{{1, "The ferry leaves at nine"}, {2, "The crossing takes forty minutes"}}},
		// A model's answer: markers after the mark, grouped markers
		// share their text, clauses split at a marker.
		{"Tides rise twice a day.[1][2] Spring tides follow the moon [2], and neap tides the quarters [3].",
			[]span{{1, "Tides rise twice a day."}, {2, "Tides rise twice a day."}, {2, "Spring tides follow the moon"}, {3, "and neap tides the quarters"}}},
		// Code points, not bytes: "é" and "—" are one each.
		{"Café crème costs 3 € — cheap [1].\nLine two [2]", []span{{1, "Café crème costs 3 € — cheap"}, {2, "Line two"}}},
		// Decimal points do not end a sentence.
		{"Version 3.5 added it [1].", []span{{1, "Version 3.5 added it"}}},
		// A marker with nothing before it.
		{"[1] Then text.", []span{{1, ""}}},
		{"No markers.", nil},
	} {
		got := CitationSpans(c.answer)
		if len(got) != len(c.want) {
			t.Fatalf("%q: %d spans %+v, want %d", c.answer, len(got), got, len(c.want))
		}
		runes := []rune(c.answer)
		markers := citationGroup.FindAllStringIndex(c.answer, -1)
		for i, g := range got {
			if g.Index != c.want[i].n || string(runes[g.Start:g.End]) != c.want[i].text {
				t.Errorf("%q: span %d = [%d] %q, want [%d] %q", c.answer, i, g.Index, string(runes[g.Start:g.End]), c.want[i].n, c.want[i].text)
			}
			// Only white space or other markers stand between a span and
			// its marker.
			m := utf8.RuneCountInString(c.answer[:markers[i][0]])
			if between := citationGroup.ReplaceAllString(string(runes[g.End:m]), ""); strings.TrimSpace(between) != "" {
				t.Errorf("%q: span %d ends at %d, its marker at %d: %q between", c.answer, i, g.End, m, between)
			}
		}
	}
	// The answer CheckCitations writes is what the spans are computed on.
	ck := CheckCitations("Alpha is first [3]. Beta [9] is second [1, 3].", 3)
	got := CitationSpans(ck.Answer)
	if ck.Answer != "Alpha is first [1]. Beta is second [2][1]." || len(got) != 3 || got[1] != (Citation{2, 20, 34}) || got[2] != (Citation{1, 20, 34}) {
		t.Fatalf("%q: %+v", ck.Answer, got)
	}
}

func TestSnippet(t *testing.T) {
	text := "The museum opens at ten. The ferry leaves the north pier at nine and at three every day. The crossing takes forty minutes. Tickets are sold on board."
	s := Snippet(text, []string{"The island ferry leaves at nine"})
	if !strings.Contains(s, "The ferry leaves the north pier at nine") || !strings.Contains(text, s) {
		t.Fatalf("snippet %q", s)
	}
	// At most SnippetChars, cut from the text at a word boundary, the
	// best sentence first.
	long := strings.Repeat("Filler words here. ", 30) + "The ferry leaves at nine. " + strings.Repeat("Other words there. ", 30)
	s = Snippet(long, []string{"ferry nine"})
	if n := utf8.RuneCountInString(s); n > SnippetChars || n < SnippetChars/2 || !strings.Contains(long, s) || !strings.Contains(s, "The ferry leaves at nine.") {
		t.Fatalf("%d chars: %q", n, s)
	}
	long = strings.Repeat("word ", 100) + "ferry nine " + strings.Repeat("other ", 100)
	s = Snippet(long, []string{"ferry nine"})
	if n := utf8.RuneCountInString(s); n > SnippetChars || n < SnippetChars/2 || !strings.Contains(long, s) {
		t.Fatalf("%d chars: %q", n, s)
	}
	if Snippet("  ", []string{"x"}) != "" {
		t.Fatal("empty text")
	}
	// Sentences after the best one, then before, while they fit.
	if s := Snippet("A b c. Ferry at nine. D e f.", []string{"ferry nine"}); s != "A b c. Ferry at nine. D e f." {
		t.Fatalf("%q", s)
	}
}
