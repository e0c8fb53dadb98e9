package research

import (
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/arr-dev/arr/domain/answer"
)

// The subject model. A question is about one thing: "the Zorblax engine",
// "the --amend option", "gc.auto". Its marks are the words that say which
// one (a proper name, an identifier, an option), its kinds the words that
// say what sort of thing it is ("engine", "option", "setting"). A
// sentence whose subject (its opening words, or those of the sentence it
// brings for its pronoun) is a thing of the same kind named otherwise
// ("The Quorvin engine runs at 3100 rpm.") states another subject's fact,
// however many of the question's words it shares: it is no candidate.
// So is the entry of another term of a manual (gc.autoPackLimit's
// description for a question about gc.auto) that does not name the term
// asked about.

// subject is what a question is about.
type subject struct {
	// marks are the words that name it, lower case ("zorblax",
	// "--amend", "gc.auto").
	marks []string
	// kinds are the words next to a mark that say what sort of thing it
	// is, as terms ("engin", "option").
	kinds map[string]bool
	// names are the API names and defined words the question asks
	// about (question.names).
	names []string
	// refs are the calls the entries of names refer to ("The arguments
	// have the same meaning as in dump()" under json.dumps()): their
	// entries are about the subject too (withRefs).
	refs []string
}

// withRefs is s with the calls the candidates of the entries it names
// refer to.
func (s subject) withRefs(cands []candidate) subject {
	s.refs = nil
	for i := range cands {
		if cands[i].named {
			for _, m := range reRef.FindAllString(cands[i].own, -1) {
				s.refs = append(s.refs, strings.ToLower(strings.TrimSuffix(m, "()")))
			}
		}
	}
	return s
}

// otherEntry reports whether c describes a term of a manual other than
// the ones the subject names or they refer to, and other than a key term
// of the question (the parameter "width" asked about in "the default
// width of textwrap.wrap()").
func (s subject) otherEntry(c *candidate, key []string) bool {
	if c.entry == "" || c.named || len(s.names) == 0 {
		return false
	}
	e := strings.ToLower(strings.TrimSuffix(c.entry, "()"))
	if ts := Terms(e); len(ts) == 1 && slices.Contains(key, ts[0]) {
		return false
	}
	return !slices.ContainsFunc(s.refs, func(r string) bool { return nameMatches(e, r) || nameMatches(r, e) })
}

// subjectWords is how far into a sentence its subject stands.
const subjectWords = 8

var (
	// reWord is a word of a question or sentence: a name, an option
	// ("--amend", "-O"), an identifier ("gc.auto", "os.path.join()").
	reWord = regexp.MustCompile(`--?[A-Za-z][\w-]*|[A-Za-z0-9_][\w.]*(\(\))?`)
	// reRef is a name a sentence refers to: a call ("dump()",
	// "json.dump()"), a CamelCase name ("FileExistsError"), a dotted name.
	reRef = regexp.MustCompile(`[A-Za-z_][\w.]*\(\)|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Za-z_]\w*\.[A-Za-z_][\w.]*`)
	// reOption is a command-line option.
	reOption = regexp.MustCompile(`^--?[A-Za-z]`)
	// notMarks are capitalized words that name no thing.
	notMarks = set(strings.Fields(`i a an the what which who whom whose how when where why is are does do can could should would will may
		if in on of for to by with from and or not no yes this that these those it its there here`))
)

// word is one word of a text, as written and lower case.
type word struct{ raw, low string }

// subjectWordsOf splits s into words, a possessive's "'s" dropped.
func subjectWordsOf(s string) []word {
	var out []word
	for _, w := range reWord.FindAllString(strings.NewReplacer("’s", "", "'s", "").Replace(s), -1) {
		w = strings.TrimRight(w, ".")
		if w != "" {
			out = append(out, word{raw: w, low: strings.ToLower(w)})
		}
	}
	return out
}

// isMark reports whether w, the i-th word of its text, names a thing: an
// option, an identifier (a dot, an underscore, a call, an inner capital or
// digit among letters), or a capitalized word that is not its text's
// first.
func isMark(w word, i int) bool {
	if notMarks[w.low] {
		return false
	}
	switch {
	case reOption.MatchString(w.raw):
		return true
	case strings.ContainsAny(w.raw, "._()") && strings.IndexFunc(w.raw, unicode.IsLetter) >= 0:
		return true
	case innerCapital(w.raw):
		return true
	}
	r := []rune(w.raw)
	return i > 0 && unicode.IsUpper(r[0])
}

// innerCapital: a CamelCase name ("ZeroDivisionError", "iPhone").
func innerCapital(s string) bool {
	prev := ' '
	for _, r := range s {
		if unicode.IsUpper(r) && unicode.IsLower(prev) {
			return true
		}
		prev = r
	}
	return false
}

// kindTerm is w as the term of a kind: a plain word (no mark, no stop
// word), stemmed; "" when it is none.
func kindTerm(w word, i int) string {
	if isMark(w, i) || strings.IndexFunc(w.raw, unicode.IsDigit) >= 0 {
		return ""
	}
	ts := Terms(w.low)
	if len(ts) != 1 {
		return ""
	}
	return ts[0]
}

// questionSubject is the subject model of question text: its marks, the
// kinds beside them, and names.
func questionSubject(text string, names []string) subject {
	s := subject{kinds: map[string]bool{}, names: names}
	ws := subjectWordsOf(text)
	for i, w := range ws {
		if !isMark(w, i) {
			continue
		}
		s.marks = append(s.marks, w.low)
		for _, j := range []int{i + 1, i - 1} {
			if j >= 0 && j < len(ws) {
				if k := kindTerm(ws[j], j); k != "" {
					s.kinds[k] = true
				}
			}
		}
	}
	return s
}

// otherThing is the mark of a thing of one of the subject's kinds that
// the opening of sentence names and the subject does not ("quorvin" in
// "The Quorvin engine runs ..."); "" when none.
func (s subject) otherThing(sentence string) string {
	if len(s.kinds) == 0 {
		return ""
	}
	ws := subjectWordsOf(sentence)
	ws = ws[:min(subjectWords, len(ws))]
	for i, w := range ws {
		if !s.kinds[kindTerm(w, i)] {
			continue
		}
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(ws) && isMark(ws[j], j) && !s.isMark(ws[j].low) {
				return ws[j].low
			}
		}
	}
	return ""
}

// isMark reports whether m is one of the subject's marks (an identifier
// the same as one, or ending with one: "json.dumps" for "dumps").
func (s subject) isMark(m string) bool {
	m = strings.TrimSuffix(m, "()")
	return slices.ContainsFunc(s.marks, func(k string) bool {
		k = strings.TrimSuffix(k, "()")
		return m == k || strings.HasSuffix(m, "."+k) || strings.HasSuffix(k, "."+m)
	})
}

// named reports whether text names the subject: one of its marks or
// names, in any case.
func (s subject) named(text string) bool {
	low := strings.ToLower(text)
	for _, m := range append(slices.Clone(s.marks), s.names...) {
		if strings.Contains(low, strings.TrimSuffix(m, "()")) {
			return true
		}
	}
	return false
}

// offSubject reports whether candidate c states another subject's fact:
// the opening of its first sentence (the sentence its pronoun refers to,
// when it brings one) or of its own names a thing of the subject's kind
// other than the subject, and c does not name the subject; or it
// describes another term of a manual than the one asked about, without
// naming the subject.
func (s subject) offSubject(c *candidate, key []string) bool {
	if s.named(c.text) {
		return false
	}
	if s.otherEntry(c, key) {
		return true
	}
	first := c.text
	if ss := answer.Sentences(c.text); len(ss) > 0 {
		first = ss[0]
	}
	return s.otherThing(first) != "" || s.otherThing(c.own) != ""
}
