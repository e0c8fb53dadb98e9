package answer

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Passage is the unit of retrieval: consecutive blocks of one section,
// under the section's heading path.
type Passage struct {
	// ID is "{doc_id}:{seq}".
	ID      string
	DocID   string
	Seq     int
	Heading []string
	Anchor  string
	// Text is the passage's blocks, one a line.
	Text string
	// Kinds has one letter a line of Text: the line's BlockKind's first
	// letter (p prose, t term, i item, r row, c code).
	Kinds string
}

// IndexedPassage is a passage with its document's title and URL (empty
// for a local file, which the answer service serves at DocsPath).
type IndexedPassage struct {
	Passage
	Title string
	URL   string
	// Published is the document's date, "YYYY-MM-DD", or "".
	Published string
}

// Passage size bounds, in bytes: blocks are gathered up to PassageTarget;
// a single block over PassageMax is cut at sentence boundaries, and a
// sentence still over PassageMax (a word list, a minified page) at the
// last space before PassageMax (or at a rune boundary when it has none),
// so no passage's terms can pass PostgreSQL's tsvector bounds.
const (
	PassageTarget = 700
	PassageMax    = 1400
)

// Document bounds: a title is cut to TitleMax bytes (its terms are
// scored with every passage) and a document keeps its first MaxPassages
// passages, so one document's analysis and rows are bounded whatever
// page it came from.
const (
	TitleMax    = 300
	MaxPassages = 2000
)

// IndexTitle is title cut to TitleMax bytes at a rune boundary (at the
// last space before it when there is one): the title the index stores
// and scores.
func IndexTitle(title string) string { return strings.TrimSpace(cutBytes(title, TitleMax)) }

// cutBytes is the prefix of s of at most n bytes ending at the last
// space within them (at a rune boundary when there is none).
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > 0 {
		return s[:sp]
	}
	return s[:cut]
}

// cutLong splits s into pieces of at most n bytes, each cut by cutBytes.
func cutLong(s string, n int) []string {
	var out []string
	for len(s) > n {
		p := cutBytes(s, n)
		if p == "" { // n is shorter than s's first rune
			_, size := utf8.DecodeRuneInString(s)
			p = s[:size]
		}
		out = append(out, p)
		s = strings.TrimLeft(s[len(p):], " ")
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// maxCodeLine is the longest code block a passage keeps: a one-line
// command ("python3 -m venv tutorial-env") completes the sentence that
// introduces it; longer code is served with the document, never quoted.
const maxCodeLine = 80

// introducedLine reports whether code is one short line (not an
// interpreter session) that the passage's last line introduces with a
// colon.
func introducedLine(cur []string, code string) bool {
	return len(cur) > 0 && strings.HasSuffix(cur[len(cur)-1], ":") && len(code) <= maxCodeLine &&
		!strings.Contains(code, "\n") && !strings.HasPrefix(code, ">>>")
}

// PassageID names passage seq of a document.
func PassageID(docID string, seq int) string { return docID + ":" + strconv.Itoa(seq) }

// Passages cuts a document into passages: per section, its prose, terms,
// list items, table rows and one-line code blocks a line introduces with
// a colon (no other code) in order, gathered up to
// PassageTarget bytes. A term (an API signature) starts a passage, so an
// entry's signature and its description stay together; a block longer
// than PassageMax is cut at sentence boundaries, and a sentence longer
// than PassageMax by bytes. A document has at most MaxPassages passages.
func Passages(d DocumentIndexed) []Passage {
	var out []Passage
	for _, s := range d.Sections {
		if len(out) >= MaxPassages {
			break
		}
		var cur []string
		var kinds []byte
		size := 0
		flush := func() {
			if len(cur) == 0 || len(out) >= MaxPassages {
				cur, kinds, size = cur[:0], kinds[:0], 0
				return
			}
			seq := len(out)
			out = append(out, Passage{ID: PassageID(d.DocID, seq), DocID: d.DocID, Seq: seq, Heading: s.Heading, Anchor: s.Anchor,
				Text: strings.Join(cur, "\n"), Kinds: string(kinds)})
			cur, kinds, size = cur[:0], kinds[:0], 0
		}
		for _, b := range s.Blocks {
			t := strings.TrimSpace(b.Text)
			if t == "" || b.Kind == Code && !introducedLine(cur, t) {
				continue
			}
			if b.Kind == Term {
				flush()
			}
			pieces := []string{t}
			if len(t) > PassageMax {
				pieces = chunkSentences(t, PassageTarget)
			}
			for _, p := range pieces {
				if size > 0 && size+len(p) > PassageTarget && !(len(cur) == 1 && isTermOnly(s.Blocks, cur[0])) {
					flush()
				}
				cur = append(cur, strings.ReplaceAll(p, "\n", " "))
				kinds = append(kinds, kindLetter(b.Kind))
				size += len(p) + 1
			}
		}
		flush()
	}
	return out
}

func kindLetter(k BlockKind) byte {
	if k == "" {
		return 'p'
	}
	return k[0]
}

// isTermOnly reports whether text is a term block of blocks (a signature
// is kept with at least the first block of its description).
func isTermOnly(blocks []Block, text string) bool {
	for _, b := range blocks {
		if b.Kind == Term && strings.TrimSpace(b.Text) == text {
			return true
		}
	}
	return false
}

// chunkSentences cuts text into pieces of about target bytes at sentence
// boundaries.
func chunkSentences(text string, target int) []string {
	var out []string
	var cur strings.Builder
	for _, s := range sentencePieces(text) {
		if cur.Len() > 0 && cur.Len()+len(s) > target {
			out = append(out, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(s)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// sentencePieces is text's sentences, each longer than PassageMax cut
// into pieces of at most PassageMax bytes.
func sentencePieces(text string) []string {
	var out []string
	for _, s := range Sentences(text) {
		out = append(out, cutLong(s, PassageMax)...)
	}
	return out
}

// abbreviations end with a period that does not end a sentence.
var abbreviations = map[string]bool{
	"e.g.": true, "i.e.": true, "etc.": true, "vs.": true, "cf.": true, "approx.": true, "no.": true,
	"mr.": true, "mrs.": true, "dr.": true, "st.": true, "fig.": true, "sec.": true, "ch.": true, "vol.": true, "ed.": true,
}

// Sentences splits text into sentences: after '.', '!' or '?' (and any
// closing quotes or brackets) followed by white space and a capital
// letter, a digit or an opening quote or bracket, unless the period ends
// an abbreviation (e.g., i.e., etc.) or an initial. Newlines also end a
// sentence (blocks are joined by newlines).
func Sentences(text string) []string {
	var out []string
	start := 0
	add := func(end int) {
		if s := strings.Join(strings.Fields(text[start:end]), " "); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '\n':
			add(i)
			i += size
			start = i
			continue
		case r == '.' || r == '!' || r == '?':
			j := i + size
			for j < len(text) && strings.ContainsRune(`"')]»`, rune(text[j])) {
				j++
			}
			if j >= len(text) || !unicode.IsSpace(rune(text[j])) || text[j] == '\n' {
				break
			}
			k := j
			for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
				k++
			}
			next, _ := utf8.DecodeRuneInString(text[k:])
			if k >= len(text) || !(unicode.IsUpper(next) || unicode.IsDigit(next) || strings.ContainsRune(`"'(“[`, next)) {
				break
			}
			if r == '.' && abbreviated(text[start:i+size]) {
				break
			}
			add(j)
		}
		i += size
	}
	add(len(text))
	return out
}

// abbreviated reports whether s ends with an abbreviation or an initial.
func abbreviated(s string) bool {
	f := strings.Fields(s)
	if len(f) == 0 {
		return false
	}
	last := strings.ToLower(strings.TrimLeft(f[len(f)-1], `"'(`))
	if abbreviations[last] {
		return true
	}
	// An initial ("J.") or a dotted abbreviation ("U.S.").
	w := strings.TrimSuffix(last, ".")
	return utf8.RuneCountInString(w) == 1 && unicode.IsLetter([]rune(w)[0]) && f[len(f)-1] != strings.ToLower(f[len(f)-1])
}
