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
	return Analysis{Title: fields(f[0]), Head: fields(f[1]), Section: fields(f[2]),
		Body: fields(f[3]), Defs: fields(f[4]), FAQ: f[5] == "?"}, true
}

// fields splits what Encode joined: on the ASCII space only, the one
// separator Encode writes, so a term holding another space (a quoted
// U+3000) comes back whole.
func fields(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, " ")
}

// maxPositions and maxPosition are PostgreSQL's bounds on a tsvector
// lexeme's positions (256 of them, none above 16383).
const (
	maxPositions = 255
	maxPosition  = 16383
	maxLexeme    = 2000 // bytes; PostgreSQL refuses words over 2047
)

// weightCode is a tsvector weight's code as PostgreSQL stores it (D 0,
// C 1, B 2, A 3).
var weightCode = map[byte]int{'A': 3, 'B': 2, 'C': 1}

// lexeme is a term of a passage's tsvector: its positions (ascending,
// at most maxPositions) and their weights.
type lexeme struct {
	term   string
	pos    []int
	weight []byte
}

// lexemes are f's tsvector lexemes in order of first occurrence: every
// term (taken as is, no text search configuration), its occurrences
// positions weighted A in the title, B in the heading and C in the body
// (the section heading and definition lines are within those).
func (f Analysis) lexemes() []*lexeme {
	var order []*lexeme
	m := map[string]*lexeme{}
	at := 0
	add := func(ts []string, weight byte) {
		for _, t := range ts {
			at++
			if len(t) > maxLexeme {
				continue
			}
			l := m[t]
			if l == nil {
				l = &lexeme{term: t}
				m[t] = l
				order = append(order, l)
			}
			if len(l.pos) < maxPositions {
				l.pos = append(l.pos, min(at, maxPosition))
				l.weight = append(l.weight, weight)
			}
		}
	}
	add(f.Title, 'A')
	add(f.Head, 'B')
	add(f.Body, 'C')
	return order
}

// TSVector is the PostgreSQL tsvector literal of f (its lexemes).
func (f Analysis) TSVector() string {
	var b strings.Builder
	for i, l := range f.lexemes() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Quote(l.term))
		b.WriteByte(':')
		for j, p := range l.pos {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
			b.WriteByte(l.weight[j])
		}
	}
	return b.String()
}

// RankWeights are the tsvector weights (D, C, B, A: body C 0.5, heading
// B 1, title A 0.75) candidates are picked by, as ts_rank takes them.
const RankWeights = "{0,0.5,1,0.75}"

// rankWeights is RankWeights by weight code.
var rankWeights = [4]float32{0, 0.5, 1, 0.75}

// Impact is a term of a passage with its static partial score: what
// PostgreSQL's ts_rank(RankWeights, tsv, term) is for the passage's
// tsvector and the one-term query (bit for bit: the same float4
// arithmetic), stored in the read model's postings so that candidates
// are picked without reading a tsvector.
type Impact struct {
	Term  string
	Score float32
}

// Impacts are the Impact of each of f's lexemes, in order of first
// occurrence.
func (f Analysis) Impacts() []Impact {
	ls := f.lexemes()
	out := make([]Impact, len(ls))
	for i, l := range ls {
		out[i] = Impact{Term: l.term, Score: rankOne(l)}
	}
	return out
}

// rankOne is PostgreSQL's calc_rank_or (tsrank.c) for a one-term query:
// over the term's positions (as a tsvector holds them: a repeated
// position once, with its greatest weight) sum w/j², plus the greatest
// weight in place of its own term, over π²/6.
func rankOne(l *lexeme) float32 {
	var codes []int
	last := -1
	for j, p := range l.pos {
		c := weightCode[l.weight[j]]
		if p == last {
			codes[len(codes)-1] = max(codes[len(codes)-1], c)
			continue
		}
		codes = append(codes, c)
		last = p
	}
	var resj float32
	wjm := float32(-1)
	jm := 0
	for j, c := range codes {
		w := rankWeights[c]
		resj = resj + w/float32((j+1)*(j+1))
		if w > wjm {
			wjm, jm = w, j
		}
	}
	x := wjm + resj - wjm/float32((jm+1)*(jm+1))
	res := float32(float64(x) / 1.64493406685)
	if res < 0 {
		res = 1e-20
	}
	return res
}

// Quote is t as a quoted lexeme of a tsvector or tsquery literal.
func Quote(t string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(t, `\`, `\\`), "'", "''") + "'"
}
