package answer

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Citation says which text of an answer one [n] marker supports.
type Citation struct {
	// Index is the marker's source number n (sources[n-1]).
	Index int `json:"index"`
	// Start and End are offsets in Unicode code points into the answer:
	// answer[Start:End] is the text the marker supports.
	Start int `json:"start"`
	End   int `json:"end"`
}

// CitationSpans returns one Citation per [n] marker of text, in order.
// Each marker supports the sentence or clause that ends at it: the text
// from the last sentence end (".", "!" or "?" followed by white space,
// or a line break), the previous marker group or the start of the answer,
// whichever is last, to the marker, without the marker itself, the white
// space around the span and the punctuation that opens it (", and ..."
// after a marker starts at "and"). Markers that stand together ([1][2])
// support the same text. Offsets are in code points (runes), End
// exclusive; a marker with no text before it gets an empty span at its
// own position.
func CitationSpans(text string) []Citation {
	locs := citationGroup.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 {
		return []Citation{}
	}
	runes := []rune(text)
	// byte offset -> rune offset
	toRune := func(b int) int { return utf8.RuneCountInString(text[:b]) }
	out := make([]Citation, 0, len(locs))
	prevEnd := 0 // rune offset just after the previous marker group
	var group Citation
	for i, l := range locs {
		ms, me := toRune(l[0]), toRune(l[1])
		together := i > 0 && strings.TrimSpace(string(runes[prevEnd:ms])) == ""
		if !together {
			group = span(runes, prevEnd, ms)
		}
		for _, n := range Markers(text[l[0]:l[1]]) {
			out = append(out, Citation{Index: n, Start: group.Start, End: group.End})
		}
		prevEnd = me
	}
	return out
}

// span is the clause of runes[from:to] that ends at to.
func span(runes []rune, from, to int) Citation {
	end := to
	for end > from && unicode.IsSpace(runes[end-1]) {
		end--
	}
	start := from
	// The last sentence end before the span's own final mark.
	for i := end - 2; i >= from; i-- {
		r := runes[i]
		if r == '\n' {
			start = i + 1
			break
		}
		if (r == '.' || r == '!' || r == '?') && unicode.IsSpace(runes[i+1]) {
			start = i + 1
			break
		}
	}
	for start < end && (unicode.IsSpace(runes[start]) || strings.ContainsRune(",;:.!?)]-–—", runes[start])) {
		start++
	}
	if start >= end {
		return Citation{Start: to, End: to}
	}
	return Citation{Start: start, End: end}
}

// SnippetChars bounds a source's snippet, in code points.
const SnippetChars = 300

// Snippet is the passage of text the answer used, at most SnippetChars
// code points, cut from text unchanged: the sentence of text that shares
// the most words (of three letters or more, folded to lower case) with
// used (the answer's text citing the source), the earliest of equals,
// with the sentences after it and then before it while they fit. A
// sentence longer than SnippetChars is cut at the last word boundary that
// fits. "" when text is empty.
func Snippet(text string, used []string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	want := words(strings.Join(used, " "))
	sents := sentenceRanges(text)
	best, bestScore := 0, -1
	for i, s := range sents {
		score := 0
		seen := map[string]bool{}
		for w := range words(text[s[0]:s[1]]) {
			if want[w] && !seen[w] {
				seen[w] = true
				score++
			}
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	lo, hi := best, best+1
	fits := func(a, b int) bool { return utf8.RuneCountInString(text[sents[a][0]:sents[b-1][1]]) <= SnippetChars }
	for hi < len(sents) && fits(lo, hi+1) {
		hi++
	}
	for lo > 0 && fits(lo-1, hi) {
		lo--
	}
	s := text[sents[lo][0]:sents[hi-1][1]]
	if utf8.RuneCountInString(s) <= SnippetChars {
		return s
	}
	r := []rune(s)[:SnippetChars]
	cut := string(r)
	if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > SnippetChars/2 {
		cut = cut[:i]
	}
	return strings.TrimRightFunc(cut, unicode.IsSpace)
}

// sentenceRanges are the byte ranges of text's sentences (as
// CitationSpans cuts them), white space around each left out.
func sentenceRanges(text string) [][2]int {
	var out [][2]int
	start := 0
	add := func(end int) {
		a, b := start, end
		for a < b && unicode.IsSpace(rune(text[a])) {
			a++
		}
		for b > a && unicode.IsSpace(rune(text[b-1])) {
			b--
		}
		if b > a {
			out = append(out, [2]int{a, b})
		}
		start = end
	}
	for i, r := range text {
		next := i + utf8.RuneLen(r)
		switch {
		case r == '\n':
			add(next)
		case (r == '.' || r == '!' || r == '?') && next < len(text) && unicode.IsSpace(rune(text[next])):
			add(next)
		}
	}
	add(len(text))
	if len(out) == 0 {
		out = append(out, [2]int{0, len(text)})
	}
	return out
}

// words are the lower-cased words of s of three letters or more.
func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if utf8.RuneCountInString(f) >= 3 {
			m[f] = true
		}
	}
	return m
}

// CitedText is, per source number (index n-1 of nSources), the answer's
// text its markers support, in order.
func CitedText(text string, nSources int) [][]string {
	out := make([][]string, nSources)
	runes := []rune(text)
	cs := CitationSpans(text)
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Start < cs[j].Start })
	for _, c := range cs {
		if c.Index >= 1 && c.Index <= nSources {
			out[c.Index-1] = append(out[c.Index-1], string(runes[c.Start:c.End]))
		}
	}
	return out
}
