package research

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

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
	// symbols are the symbols it names ("^", "%j"): a table row of
	// another symbol is another thing (otherRow).
	symbols []string
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

// options are the subject's marks that are options ("--amend", "-d").
func (s subject) options() []string {
	var out []string
	for _, m := range s.marks {
		if reOption.MatchString(m) {
			out = append(out, m)
		}
	}
	return out
}

// otherEntry reports whether c describes a term of a manual other than
// the ones the subject names or they refer to, and other than a key term
// of the question (the parameter "width" asked about in "the default
// width of textwrap.wrap()").
func (s subject) otherEntry(c *candidate, key []string) bool {
	if c.entry == "" || c.named {
		return false
	}
	if reOption.MatchString(c.entry) {
		// Another option's entry, when the question asks about an option.
		return len(s.options()) > 0
	}
	if len(s.names) == 0 {
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
	reWord = regexp.MustCompile(`--?[A-Za-z][\w-]*|[A-Za-z0-9_][\w.-]*(\(\))?`)
	// reRef is a name a sentence refers to: a call ("dump()",
	// "json.dump()"), a CamelCase name ("FileExistsError"), a dotted name.
	reRef = regexp.MustCompile(`[A-Za-z_][\w.]*\(\)|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Za-z_]\w*\.[A-Za-z_][\w.]*`)
	// reSymbol is a symbol a question names in quotes or a format
	// directive: "'^'", "%j".
	reSymbol = regexp.MustCompile(`'[^'\sA-Za-z0-9]{1,3}'|"[^"\sA-Za-z0-9]{1,3}"|%[A-Za-z]\b`)
	// reRow is a table row's first cell: "Option: '>'; Meaning: ...".
	reRow = regexp.MustCompile(`^([A-Za-z][A-Za-z ]{0,20}): ([^;]{1,40});`)
	// reOption is a command-line option.
	reOption = regexp.MustCompile(`^--?[A-Za-z]`)
	// notMarks are capitalized words that name no thing.
	notMarks = set(strings.Fields(`i a an the what which who whom whose how when where why is are does do can could should would will may
		if in on of for to by with from and or not no yes this that these those it its there here`))
)

// word is one word of a text, as written and lower case.
type word struct{ raw, low string }

// markOf is w as a mark: lower case, but an option as written (git
// branch's -d and -D are two options).
func markOf(w word) string {
	if reOption.MatchString(w.raw) {
		return w.raw
	}
	return w.low
}

// subjectWordsOf splits s into words, a possessive's "'s" dropped.
func subjectWordsOf(s string) []word {
	var out []word
	for _, w := range reWord.FindAllString(strings.NewReplacer("’s", "", "'s", "").Replace(s), -1) {
		w = strings.TrimRight(w, ".-")
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
	for _, m := range reSymbol.FindAllStringIndex(text, -1) {
		s.symbols = append(s.symbols, strings.Trim(text[m[0]:m[1]], `'"`))
		for _, k := range Terms(text[m[1]:min(len(text), m[1]+30)]) {
			// "the '^' alignment option": the kinds after it.
			s.kinds[k] = true
		}
	}
	ws := subjectWordsOf(text)
	for i, w := range ws {
		if !isMark(w, i) {
			continue
		}
		s.marks = append(s.marks, markOf(w))
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
	if sym := s.otherSymbol(sentence); sym != "" {
		return sym
	}
	if reRow.MatchString(sentence) {
		// A table row's cells start with capitals ("Option: '>';
		// Meaning: ..."): its subject is its first cell (otherRow).
		return ""
	}
	ws := subjectWordsOf(sentence)
	ws = ws[:min(subjectWords, len(ws))]
	for i, w := range ws {
		if !s.kinds[kindTerm(w, i)] {
			continue
		}
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(ws) && isMark(ws[j], j) && !s.isMark(markOf(ws[j])) {
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
	if reOption.MatchString(m) {
		return slices.Contains(s.marks, m)
	}
	m = strings.ToLower(m)
	return slices.ContainsFunc(s.marks, func(k string) bool {
		k = strings.TrimSuffix(k, "()")
		return m == k || strings.HasSuffix(m, "."+k) || strings.HasSuffix(k, "."+m)
	})
}

// named reports whether text names the subject: one of its marks or
// names, in any case.
func (s subject) named(text string) bool { return s.nameIn(text, false) }

// mentioned is named, or the last part of a dotted name or a plural
// stands in text ("NamedTemporaryFiles" for tempfile.NamedTemporaryFile):
// enough for evidence that text speaks of the subject, not to tell it
// from another thing of its kind.
func (s subject) mentioned(text string) bool { return s.nameIn(text, true) }

func (s subject) nameIn(text string, loose bool) bool {
	low := strings.ToLower(text)
	for _, m := range append(slices.Clone(s.marks), s.names...) {
		if reOption.MatchString(m) {
			if containsOption(text, m) {
				return true
			}
			continue
		}
		m = strings.TrimSuffix(m, "()")
		if containsWord(low, m) {
			return true
		}
		var ws []string
		if last := m[strings.LastIndexByte(m, '.')+1:]; loose {
			ws = append(ws, last, m+"s", last+"s")
		}
		for _, w := range ws {
			if len(w) > 2 && containsWord(low, w) {
				return true
			}
		}
	}
	return false
}

// containsWord reports whether w stands in s as a word of its own (no
// letter or digit right before or after it).
func containsWord(s, w string) bool {
	if w == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if !isWordRune(before) && !isWordRune(after) {
			return true
		}
		i = start + 1
	}
}

// containsOption reports whether the option opt stands in s as written,
// not as the start of a longer one ("-d" is not in "--delete").
func containsOption(s, opt string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], opt)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(opt)
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if before != '-' && !isWordRune(before) && after != '-' && !isWordRune(after) {
			return true
		}
		i = start + 1
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

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
	return s.otherThing(first) != "" || s.otherThing(c.own) != "" || s.otherRow(first) || s.otherRow(c.own)
}

// otherSymbol is a symbol other than the subject's that the opening of
// sentence names as a thing of its kind ("The '_' option signals ..." for
// the ',' option); "" when none.
func (s subject) otherSymbol(sentence string) string {
	if len(s.symbols) == 0 {
		return ""
	}
	for _, m := range reSymbol.FindAllStringIndex(sentence, -1) {
		if m[0] > 40 {
			break
		}
		sym := strings.Trim(sentence[m[0]:m[1]], `'"`)
		next := Terms(sentence[m[1]:min(len(sentence), m[1]+20)])
		if !slices.Contains(s.symbols, sym) && len(next) > 0 && s.kinds[next[0]] {
			return sym
		}
	}
	return ""
}

// otherRow reports whether row is a table row whose first cell is another
// symbol than the one asked about ("Option: '>'; ..." for the '^' option,
// "Directive: %Z; ..." for %j), its label a kind of the subject or any
// when it asks about a symbol.
func (s subject) otherRow(row string) bool {
	m := reRow.FindStringSubmatch(row)
	if m == nil || len(s.symbols) == 0 {
		return false
	}
	cell := strings.Trim(strings.TrimSpace(m[2]), `'"`)
	return !slices.Contains(s.symbols, cell)
}

// covers reports whether c is about the subject: a question that names a
// thing is answered only by a sentence that names it (an identifier's
// parts will do: "shared buffers" for shared_buffers), follows one that
// does in its passage (about), or stands under a heading or term that
// does. A question naming no thing: any sentence.
func (s subject) covers(c *candidate) bool {
	if len(s.marks) == 0 || s.mentioned(c.text) || c.about || c.named {
		return true
	}
	if e := strings.ToLower(strings.TrimSuffix(c.entry, "()")); c.entry != "" &&
		(s.isMark(markOf(word{raw: c.entry, low: e})) || slices.ContainsFunc(s.refs, func(r string) bool { return nameMatches(e, r) })) {
		// The entry of the name asked about, or of one its entry refers to.
		return true
	}
	has := func(t string) bool { return c.terms[t] || c.context[t] }
	for _, m := range s.marks {
		ts := Terms(m)
		switch {
		case slices.Contains(ts, m) && c.context[m]:
			// Its heading or term names it whole.
			return true
		case strings.Contains(m, "_") && !strings.Contains(m, ".") && !slices.ContainsFunc(ts, func(t string) bool { return t != m && !has(t) }):
			// An identifier's parts: "shared buffers".
			return true
		case reOption.MatchString(m) && len(ts) > 0 && !slices.ContainsFunc(ts, func(t string) bool { return !c.context[t] }):
			// Under the option's entry (its term line names it).
			return true
		case strings.Contains(m, ".") && !slices.ContainsFunc(ts, func(t string) bool { return t != m && !has(t) }):
			// A dotted name's parts in the sentence, its heading and term: a
			// parameter's entry under textwrap.wrap().
			return true
		}
	}
	return false
}

// markAbout sets the about of every candidate that follows, in its
// passage, one naming the subject.
func (s subject) markAbout(cands []candidate) {
	if len(s.marks) == 0 {
		return
	}
	for i := range cands {
		c := &cands[i]
		if i > 0 && cands[i-1].passage == c.passage && (cands[i-1].about || s.named(cands[i-1].text)) {
			c.about = true
		}
	}
}

// distinctShare: a mark names the subject only when it is at least this
// share as rare as the question's rarest key term (by weight): "Python"
// in a question about Python's manual names the corpus, not the thing
// asked about.
const distinctShare = 0.5

// distinct is s without the marks that every page uses: a mark each of
// whose weighed terms weighs (by its rarity in the index) under
// distinctShare of the heaviest key term the sources hold. A mark with no weighed term (a dotted name, a stop
// word) is kept.
func (s subject) distinct(weight map[string]float64, cands []candidate) subject {
	top := 0.0
	for t, w := range weight {
		// Of the terms the sources hold: a word no page has ("fast") is
		// no measure of rarity.
		if slices.ContainsFunc(cands, func(c candidate) bool { return c.terms[t] }) {
			top = max(top, w)
		}
	}
	var marks []string
	for _, m := range s.marks {
		weighed, light := 0, 0
		for _, t := range Terms(m) {
			if w, ok := weight[t]; ok {
				weighed++
				if w < distinctShare*top {
					light++
				}
			}
		}
		if weighed == 0 || light < weighed {
			marks = append(marks, m)
		}
	}
	s.marks = marks
	if len(marks) == 0 && len(s.symbols) == 0 {
		s.kinds = map[string]bool{}
	}
	return s
}

// reAsked finds what a question asks for: the words after "which",
// "default", "maximum" or "minimum" ("Which environment variable sets
// ...", "the default timeout of ...", "the maximum size of ...").
var reAsked = regexp.MustCompile(`(?i)\b(?:which|default|maximum|minimum)\s+([a-z][\w-]*)(?:\s+([a-z][\w-]*))?`)

// relationTerms are the terms of what the question asks for of its
// subject (reAsked: at most two words, up to a stop word, none that is a
// mark of the subject): "timeout" in "What is the default timeout of
// re.match?". The sentence that answers holds them (holdsRelation).
func relationTerms(q question) []string {
	m := reAsked.FindStringSubmatch(q.text)
	if m == nil || q.kind == qError {
		// "Which exception ...": the exception's name answers, the
		// answer-type cue looks for it.
		return nil
	}
	var rel []string
	for _, w := range m[1:] {
		ts := Terms(w)
		if w == "" || len(ts) != 1 || q.subject.isMark(markOf(word{raw: w, low: strings.ToLower(w)})) {
			break
		}
		rel = append(rel, ts[0])
	}
	return rel
}

// relationHeld is the share of the relation's terms c must hold, with
// its heading and term (a neighbour's counting half).
const relationHeld = 0.3

// holdsRelation reports whether c, with its heading and term, holds
// relationHeld of the question's relation's terms (by weight).
func holdsRelation(cands []candidate, i int, rel []string, weight map[string]float64) bool {
	if len(rel) == 0 {
		return true
	}
	c := &cands[i]
	held, total := 0.0, 0.0
	for _, t := range rel {
		w := max(weight[t], 1e-9)
		total += w
		switch {
		case c.terms[t] || c.context[t] || compounded(c.terms, t):
			held += w
		case neighbourHas(cands, i, t):
			held += neighbourWeight * w
		}
	}
	return held/total >= relationHeld
}

// compounded reports whether a term of terms holds t inside it
// ("compresslevel" holds "compress" and "level").
func compounded(terms map[string]bool, t string) bool {
	if len(t) < 4 {
		return false
	}
	for u := range terms {
		if len(u) > len(t) && strings.Contains(u, t) {
			return true
		}
	}
	return false
}
