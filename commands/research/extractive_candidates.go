package research

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/arr-dev/arr/domain/answer"
)

// candidate is a sentence that might be quoted.
type candidate struct {
	text    string // with its predecessor when it opens with a pronoun
	own     string // the sentence alone
	terms   map[string]bool
	cov     float64         // weighted share of the question's key terms
	context map[string]bool // terms of its page title and heading path
	src     int
	passage string
	index   int // of the sentence in its passage
	rank    int // of its passage among the chosen ones
	score   float64
	named   bool   // it describes a term the question names
	off     bool   // its subject is another than the question's (offSubject)
	about   bool   // a sentence before it in its passage names the question's subject
	entry   string // the name of the term it describes, if any
	// lead is how directly it answers (leadScore): the chosen sentence of
	// the best lead comes first.
	lead float64
	// ownCov, ctxCov and subjCov are the shares of the question's key
	// terms its own sentence, its heading and term only, and its own first
	// four terms hold (ownCoverage); phrase is the share of the question's
	// term pairs it repeats (phraseShare).
	ownCov, ctxCov, subjCov, phrase float64
}

// candidateSentences is the extractive writer's second stage: the
// sentences of the sources' passages, in order, each with its passage's
// context, and their terms. For a question about a default, a sentence
// that states one brings the sentence that says what has it
// (bringSubjects).
func candidateSentences(srcs []numbered, q question) []candidate {
	var cands []candidate
	rank := 0
	for si, s := range srcs {
		for _, p := range s.passages {
			r := passageReader{src: si, rank: rank, id: p.ID, names: q.names, options: q.subject.options(), base: map[string]bool{}}
			for _, t := range Terms(p.Title + " " + strings.Join(p.Heading, " ")) {
				r.base[t] = true
			}
			r.context = r.base
			cands = r.read(cands, p.Passage)
			rank++
		}
	}
	if len(cands) > 0 && q.asksDefault {
		bringSubjects(cands, q.key)
	}
	for i := range cands {
		cands[i].terms = set(Terms(cands[i].text))
	}
	return cands
}

// passageReader cuts one passage into candidates, carrying what a line
// tells of the next: the sentence before, and the term (an API
// signature, a glossary word, an option or setting of a manual page) the
// lines after it describe, up to the next term.
type passageReader struct {
	src, rank int
	id        string
	names     []string        // the names the question asks about
	options   []string        // the options it asks about ("--amend")
	base      map[string]bool // terms of the page title and heading path
	// context is base with the terms of the term being described; named:
	// that term is one the question names.
	context map[string]bool
	named   bool
	entry   string // the name of the term being described
	n       int    // sentence index within the passage
	prev    string // the sentence before, in this passage
	subject string // the name of the term the next line describes
}

// read appends the candidates of p's lines to cands.
func (r *passageReader) read(cands []candidate, p answer.Passage) []candidate {
	for li, block := range strings.Split(p.Text, "\n") {
		kind := byte('p')
		if li < len(p.Kinds) {
			kind = p.Kinds[li]
		}
		switch kind {
		case 'c':
			r.command(cands, block)
		case 't':
			r.term(block)
		default:
			cands = r.prose(cands, block)
		}
	}
	return cands
}

// command completes, with a one-line command, the sentence that
// introduces it ("run the venv module as a script with the directory
// path:").
func (r *passageReader) command(cands []candidate, block string) {
	cmd, ok := command(block)
	if !ok || len(cands) == 0 {
		return
	}
	last := &cands[len(cands)-1]
	if last.passage == r.id && strings.HasSuffix(last.own, ":") {
		last.text += " " + cmd + "."
		last.own += " " + cmd + "."
		r.prev = last.own
	}
}

// term takes a term line (an API signature) as context, not prose: its
// terms, and its name as the subject of the description that follows.
func (r *passageReader) term(block string) {
	// Every sentence of the term's description, not only the first, is
	// about the term ("The default value is 6700." under gc.auto); none
	// after the next term is.
	r.context = maps.Clone(r.base)
	for _, t := range Terms(block) {
		r.context[t] = true
	}
	r.subject, r.prev = termName(block), ""
	r.entry, r.named = r.subject, namesTerm(r.subject, r.names)
	if opts := termOptions(block); r.subject == "" && len(opts) > 0 {
		// An option's entry ("-d, --delete", "--amend"): the
		// definition-list item headed by the option names it, as the
		// entry of an API names the API.
		r.entry = opts[0]
		r.named = slices.ContainsFunc(opts, func(o string) bool { return slices.Contains(r.options, o) })
	}
	if r.subject == "" && quotable(block) {
		// A term that is a sentence ("FORMAT_XZ: The .xz container
		// format.") is what "This" refers to.
		r.prev = block
	}
}

// prose appends the sentences of a prose line.
func (r *passageReader) prose(cands []candidate, block string) []candidate {
	for i, sen := range answer.Sentences(block) {
		c := candidate{text: sen, src: r.src, passage: r.id, index: r.n, rank: r.rank, context: r.context, named: r.named, entry: r.entry}
		r.n++
		switch {
		case i == 0 && r.subject != "" && !mentions(sen, r.subject):
			// The first sentence of a term's description has the term as
			// its subject ("Identical to copy() except ..." describes
			// shutil.copy2()).
			c.text = r.subject + ": " + sen
			sen = c.text
		case pronounStart.MatchString(sen) && r.prev != "":
			c.text = r.prev + " " + sen
		}
		r.prev = sen
		c.own = sen
		cands = append(cands, c)
	}
	r.subject = ""
	return cands
}

// bringSubjects gives a sentence that states a default ("None (the
// default) selects the most compact representation.") the sentence
// before it when that one names a key term it lacks (what has the
// default: "If indent is a non-negative integer ...").
func bringSubjects(cands []candidate, key []string) {
	for i := len(cands) - 1; i > 0; i-- {
		c, prev := &cands[i], cands[i-1]
		if prev.passage != c.passage || c.text != c.own || prev.text != prev.own || !cueDefaultValue.MatchString(c.text) {
			continue
		}
		have, prevHas := set(Terms(c.text)), set(Terms(prev.text))
		for _, t := range key {
			if !have[t] && prevHas[t] {
				c.text = prev.text + " " + c.text
				break
			}
		}
	}
}

// reTermOption is an option of an option's term line ("-d", "--delete",
// "--amend" in "--amend[=<mode>]"; "--[no-]verify" as "--verify").
var reTermOption = regexp.MustCompile(`(?:^|[\s,|])(--?(?:\[no-\])?[A-Za-z][\w-]*)`)

// termOptions are the options a term line heads with, when it is an
// option's term (it starts with "-"); the "[no-]" of a negatable option
// gives both forms.
func termOptions(block string) []string {
	t := strings.TrimSpace(block)
	if !strings.HasPrefix(t, "-") {
		return nil
	}
	var out []string
	for _, m := range reTermOption.FindAllStringSubmatch(t, -1) {
		o := m[1]
		if strings.Contains(o, "[no-]") {
			out = append(out, strings.Replace(o, "[no-]", "", 1), strings.Replace(o, "[no-]", "no-", 1))
			continue
		}
		out = append(out, o)
	}
	return out
}

// namesTerm reports whether the term named term (termName's) is one of
// names, the names a question asks about: the same name, or one a
// qualified name ends with ("dict.get" for the term "get()" of the class
// dict, "dumps" for "json.dumps()"), in any case.
func namesTerm(term string, names []string) bool {
	term = strings.ToLower(strings.TrimSuffix(term, "()"))
	if term == "" {
		return false
	}
	for _, n := range names {
		// Within a passage already retrieved, also the other way round:
		// "dict.get" names the term get() of the class dict.
		if nameMatches(term, n) || strings.HasSuffix(n, "."+term) {
			return true
		}
	}
	return false
}
