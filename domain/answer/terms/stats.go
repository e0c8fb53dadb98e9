package terms

import (
	"strconv"
	"strings"

	"github.com/arr-dev/arr/domain/answer"
)

// Stats are the corpus statistics BM25F scores with: how many passages
// the index holds, the summed lengths (in terms) of their title, heading
// and body fields, and the document frequency (passages holding it) of
// some terms.
type Stats struct {
	Passages                   int64
	SumTitle, SumHead, SumBody int64
	DF                         map[string]int64
}

// Candidates are the passages a search of the read model scores, with
// the corpus statistics it scores them with and the generation, read in
// one snapshot.
type Candidates struct {
	Passages []answer.IndexedPassage
	// Analyses are the passages' terms, as stored.
	Analyses   []Analysis
	Stats      Stats
	Generation uint64
}

// Analysis is a passage's terms by field, as the index counts them: its
// page title's, its heading path's, its own section heading's (the last
// of the path), its body's (code lines left out, in order) and its
// definition lines' (Kinds 't'); FAQ says its section heading is a
// question.
type Analysis struct {
	Title, Head, Section, Body, Defs []string
	FAQ                              bool
}

// Analyze splits an indexed passage into its fields' terms.
func Analyze(p answer.IndexedPassage) Analysis {
	return AnalyzeTitled(p.Passage, Split(p.Title))
}

// AnalyzeTitled is Analyze of p under a title whose terms (Split) are
// title: a document's title analysed once for all its passages.
func AnalyzeTitled(p answer.Passage, title []string) Analysis {
	a := Analysis{Title: title, Head: Split(strings.Join(p.Heading, " ")), Body: Split(Body(p))}
	if len(p.Heading) > 0 {
		a.Section = Split(p.Heading[len(p.Heading)-1])
		a.FAQ = strings.Contains(p.Heading[len(p.Heading)-1], "?")
	}
	for li, line := range strings.Split(p.Text, "\n") {
		if li < len(p.Kinds) && p.Kinds[li] == 't' {
			a.Defs = append(a.Defs, Split(line)...)
		}
	}
	return a
}

// Encode is a as the read model stores it: each field's terms joined by
// spaces (no term holds one), and "?" for an FAQ.
func (a Analysis) Encode() []string {
	faq := ""
	if a.FAQ {
		faq = "?"
	}
	return []string{strings.Join(a.Title, " "), strings.Join(a.Head, " "), strings.Join(a.Section, " "),
		strings.Join(a.Body, " "), strings.Join(a.Defs, " "), faq}
}

// Decode is the analysis Encode stored as f, and false when f is not one.
func Decode(f []string) (Analysis, bool) {
	if len(f) != 6 {
		return Analysis{}, false
	}
	return Analysis{Title: strings.Fields(f[0]), Head: strings.Fields(f[1]), Section: strings.Fields(f[2]),
		Body: strings.Fields(f[3]), Defs: strings.Fields(f[4]), FAQ: f[5] == "?"}, true
}

// maxPositions and maxPosition are PostgreSQL's bounds on a tsvector
// lexeme's positions (256 of them, none above 16383).
const (
	maxPositions = 255
	maxPosition  = 16383
	maxLexeme    = 2000 // bytes; PostgreSQL refuses words over 2047
)

// TSVector is the PostgreSQL tsvector literal of f: every term a lexeme
// (taken as is, no text search configuration), its occurrences
// positions weighted A in the title, B in the heading and C in the body
// (the section heading and definition lines are within those).
func (f Analysis) TSVector() string {
	type lex struct {
		pos []string
	}
	order := []string{}
	m := map[string]*lex{}
	at := 0
	add := func(ts []string, weight string) {
		for _, t := range ts {
			at++
			if len(t) > maxLexeme {
				continue
			}
			l := m[t]
			if l == nil {
				l = &lex{}
				m[t] = l
				order = append(order, t)
			}
			if len(l.pos) < maxPositions {
				l.pos = append(l.pos, strconv.Itoa(min(at, maxPosition))+weight)
			}
		}
	}
	add(f.Title, "A")
	add(f.Head, "B")
	add(f.Body, "C")
	var b strings.Builder
	for i, t := range order {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Quote(t))
		b.WriteByte(':')
		b.WriteString(strings.Join(m[t].pos, ","))
	}
	return b.String()
}

// Quote is t as a quoted lexeme of a tsvector or tsquery literal.
func Quote(t string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(t, `\`, `\\`), "'", "''") + "'"
}
