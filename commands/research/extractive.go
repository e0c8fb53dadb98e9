package research

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/arr-dev/arr/domain/answer"
)

// The extractive writer answers without a language model: it picks the
// sentences of the selected passages that answer the question, not those
// that merely share its words.
//
//   - A sentence scores by the weighted share of the question's key terms
//     it holds, with the terms it lacks counted at half weight when its
//     neighbour in the same block holds them (a setting's description
//     followed by "The default is 4."), by how close together they stand,
//     by its passage's rank, and by a cue of the answer's type: a number
//     or a unit for "what is the default / how many", a definition for
//     "what is", an instruction for "how do I", a contrast for "what is
//     the difference", an exception for "which error".
//   - A sentence that opens with a pronoun ("This", "It", "These") brings
//     the sentence before it, so "this" has its referent.
//   - 2 to 5 sentences are chosen by maximal marginal relevance (no two
//     saying the same), each cited to its source. Code, markup and
//     navigation never become prose.
//   - When the best sentence holds too little of the question, the answer
//     says the sources do not answer it and cites nothing.

// Chosen is one sentence of an extractive answer.
type Chosen struct {
	Passage  string
	Sentence int
	Source   int
}

// qtype is what kind of answer a question wants.
type qtype int

const (
	qOther  qtype = iota
	qValue        // what is the default / how many / how much / which version
	qDefine       // what is X / what does X mean
	qHowTo        // how do I / how can I / how to
	qDiff         // difference between / compare
	qError        // which exception / what error
)

var (
	reValue  = regexp.MustCompile(`(?i)\b(default|how (many|much|long|large|big)|maximum|minimum|limit|size|version|number of|value of|what (level|port|size|encoding|mode))\b`)
	reDefine = regexp.MustCompile(`(?i)^\s*(what (is|are|does)|define|meaning of|what's)\b`)
	reHowTo  = regexp.MustCompile(`(?i)^\s*(how (do|can|should|would) (i|you|we|one)|how to|what is the (best|right|correct) way)\b`)
	reDiff   = regexp.MustCompile(`(?i)\b(difference|differ|compare|versus|vs\.?)\b`)
	reError  = regexp.MustCompile(`(?i)\b(exception|error|raised?|raises)\b`)
	reWhich  = regexp.MustCompile(`(?i)^\s*(which|what)\b`)
	reDeflt  = regexp.MustCompile(`(?i)\bdefault`)
)

func classify(q string) qtype {
	switch {
	case reDiff.MatchString(q):
		return qDiff
	case reError.MatchString(q) && reWhich.MatchString(q):
		return qError
	case reValue.MatchString(q):
		return qValue
	case reHowTo.MatchString(q):
		return qHowTo
	case reDefine.MatchString(q):
		return qDefine
	}
	return qOther
}

var (
	cueNumber  = regexp.MustCompile(`(?i)(\b\d+(\.\d+)?\b|\b(none|true|false|zero|one|two|three|four|five|ten|infinite|unlimited)\b|\b(bytes?|seconds?|ms|kb|mb|gb|characters?|digits?|%|percent)\b)`)
	cueDefault = regexp.MustCompile(`(?i)\b(default(s|ed)?( (is|to|value))?|by default|if (omitted|not (given|specified|provided))|unless)\b`)
	// cueDefaultValue states what a default is: "the default protocol is
	// 4", "defaults to None", "(default: False)", "None (the default)",
	// "this is the default".
	cueDefaultValue = regexp.MustCompile(`(?i)\bdefault(s| value| [a-z_]+){0,3} (is|are|was|of|to|:|=) \S|\bdefaults to\b|\(\s*(the )?default\b|\b(is|are) (the|its|their) default\b|\b(is|are) (used )?by default\b`)
	// versionRef is a version number, which answers no "how many".
	versionRef    = regexp.MustCompile(`(?i)\b(version|python|protocol|since|in) \d+(\.\d+)*`)
	cueDefinition = regexp.MustCompile(`(?i)\b(is|are) (a|an|the)\b|\b(refers to|means|is defined as|is used to|represents?)\b`)
	cueHowTo      = regexp.MustCompile(`(?i)^(to |use |call |pass |set |run |add |create |write |open |import |you can |you should |the (easiest|simplest|recommended) way)|\b(use|call|pass|set|run|create|with the|using)\b`)
	cueContrast   = regexp.MustCompile(`(?i)\b(whereas|while|unlike|but|however|instead|rather than|in contrast|differs?|difference|only|both|except|identical to|same as|similar to|also)\b`)
	cueError      = regexp.MustCompile(`\b[A-Z][A-Za-z]*(Error|Exception|Warning)\b|(?i)\braises?\b`)
	pronounStart  = regexp.MustCompile(`^(This|These|That|Those|It|Its|They|Their|Such|He|She|Here|There|Thus|Also|Otherwise|However|But|So|Therefore|Hence|Instead|Similarly|Likewise|Consequently|In this case|In that case|In either case|In both cases)\b`)
	// codeLike marks a sentence that is code or markup, not prose.
	codeLike = regexp.MustCompile(`(^\s*(>>>|\$ |\.\.\.|#!|import |def |class \w+[:(]|return |print\())|\bfrom \S+ import\b|[{}]\s*$|^\s*[\[{"]|;\s*$|</?[a-z]+[ >]|&[a-z]+;|\b(Prev|Next|Up|Home|Navigation|index modules)\s*(\||$)`)
)

// minCoverage is the share of the question's key terms (by weight) the
// best sentence must hold, with its neighbours, for the sources to count
// as answering.
const minCoverage = 0.4

// contextWeight is how much a key term counts that a sentence lacks but its
// passage's page title or heading path holds (an FAQ entry's heading is the
// question it answers).
const contextWeight = 0.7

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
	named   bool // its passage is the entry of an API the question names
}

// extractive writes the answer to question from the sources' passages; ""
// when they do not answer it.
//
// Key terms weigh by their rarity in idx, the passages ranked (a word
// every page uses, like "python" in Python's manual, hardly counts).
func extractive(question string, srcs []numbered, idx *Index) (string, []Chosen) {
	qt := classify(question)
	key := uniqueTerms(Terms(question))
	if d := definedNames(question); len(d) > 0 {
		// "What is a decorator in Python?" asks about "decorator"; the
		// rest is the setting.
		key = uniqueTerms(Terms(d[0]))
	}
	if qt == qDiff {
		// "difference" names the kind of question, not what it is about.
		key = slices.DeleteFunc(key, func(t string) bool { return diffWords[t] })
	}
	if len(key) == 0 {
		return "", nil
	}
	// Each key term weighs by how rare it is among the passages' sentences.
	var cands []candidate
	rank := 0
	names := askedNames(question)
	for si, s := range srcs {
		for _, p := range s.passages {
			named := definesName(p.Passage, names)
			ctxTerms := map[string]bool{}
			for _, t := range Terms(p.Title + " " + strings.Join(p.Heading, " ")) {
				ctxTerms[t] = true
			}
			n := 0        // sentence index within the passage
			prev := ""    // the sentence before, in this passage
			subject := "" // the name of the term the next line describes
			for li, block := range strings.Split(p.Text, "\n") {
				if li < len(p.Kinds) && p.Kinds[li] == 'c' {
					// A one-line command a sentence introduces ("run the
					// venv module as a script with the directory path:")
					// completes that sentence.
					if cmd, ok := command(block); ok && len(cands) > 0 {
						last := &cands[len(cands)-1]
						if last.passage == p.ID && strings.HasSuffix(last.own, ":") {
							last.text += " " + cmd + "."
							last.own += " " + cmd + "."
							prev = last.own
						}
					}
					continue
				}
				if li < len(p.Kinds) && p.Kinds[li] == 't' {
					// A term (an API signature) is context, not prose.
					for _, t := range Terms(block) {
						ctxTerms[t] = true
					}
					subject, prev = termName(block), ""
					if subject == "" && quotable(block) {
						// A term that is a sentence ("FORMAT_XZ: The .xz
						// container format.") is what "This" refers to.
						prev = block
					}
					continue
				}
				sents := answer.Sentences(block)
				for i, sen := range sents {
					c := candidate{text: sen, src: si, passage: p.ID, index: n, rank: rank, context: ctxTerms, named: named}
					n++
					switch {
					case i == 0 && subject != "" && !mentions(sen, subject):
						// The first sentence of a term's description has
						// the term as its subject ("Identical to copy()
						// except ..." describes shutil.copy2()).
						c.text = subject + ": " + sen
						sen = c.text
					case pronounStart.MatchString(sen) && prev != "":
						c.text = prev + " " + sen
					}
					prev = sen
					c.own = sen
					cands = append(cands, c)
				}
				subject = ""
			}
			rank++
		}
	}
	if len(cands) == 0 {
		return "", nil
	}
	if qt == qValue && reDeflt.MatchString(question) {
		bringSubjects(cands, key)
	}
	df := map[string]int{}
	for i := range cands {
		cands[i].terms = map[string]bool{}
		for _, t := range Terms(cands[i].text) {
			cands[i].terms[t] = true
		}
		for t := range cands[i].terms {
			df[t]++
		}
	}
	weight := map[string]float64{}
	for _, t := range key {
		w := math.Log(1 + float64(len(cands)+1)/float64(df[t]+1))
		if idx != nil && idx.Len() > 0 {
			w = idx.IDF(t)
		}
		weight[t] = w
	}
	var sides [][]string
	if qt == qDiff {
		sides = comparedSides(question, key)
	}
	// Neighbours: the terms of the sentences before and after in the same
	// passage block, for coverage at half weight.
	for i := range cands {
		c := &cands[i]
		if !quotable(c.text) {
			c.score = -1
			continue
		}
		cov := coverage(cands, i, key, weight)
		// One side of a comparison, said of itself, answers half of it
		// ("A shallow copy ... inserts references"): it covers its side's
		// terms and those the sides share.
		for _, side := range sides {
			cov = max(cov, coverage(cands, i, side, weight))
		}
		c.cov = cov
		cueOf := cue(qt, c.text, question)
		if qt == qDefine && c.named {
			cueOf = 1 // the entry of what is asked about defines it
		}
		c.score = cov*(1+0.3*closeness(c.text, key)) + 0.35*cueOf - 0.03*float64(c.rank)
		if n := len(c.text); n < 40 {
			c.score -= 0.15
		} else if n > 450 {
			c.score -= 0.1
		}
		if subjectOfSide(c.text, sides) {
			// "A shallow copy constructs ...": a side as the subject says
			// what it is.
			c.score += sideBonus
		}
		if c.named {
			// From the entry of an API the question names.
			c.score += namedBonus
		}
		if changeNote.MatchString(c.text) {
			// A version note says what changed, seldom what is.
			c.score -= 0.15
		}
	}
	best := -1
	for i := range cands {
		if best < 0 || cands[i].score > cands[best].score {
			best = i
		}
	}
	// The sources answer only if some sentence (with its neighbours)
	// holds most of what the question asks about.
	if best < 0 || cands[best].score < 0.45 || cands[best].cov < minCoverage {
		return "", nil
	}
	// Maximal marginal relevance: relevant, and unlike what is chosen.
	const lambda = 0.7
	chosen := []int{best}
	length := len(cands[best].text)
	for len(chosen) < 5 && length < 900 {
		next, nextScore := -1, math.Inf(-1)
		for i := range cands {
			if cands[i].score < 0.6*cands[best].score || cands[i].cov < minCoverage/2 || contains(chosen, i) || overlaps(cands, chosen, i) {
				continue
			}
			sim := 0.0
			for _, j := range chosen {
				sim = max(sim, jaccard(cands[i].terms, cands[j].terms))
			}
			m := lambda*cands[i].score - (1-lambda)*sim
			if newSide(cands, chosen, i, sides) {
				// A side said of itself shares the other's words
				// ("string representation") without repeating it.
				m = lambda*cands[i].score + sideBonus
			}
			if m > nextScore {
				next, nextScore = i, m
			}
		}
		keep := 0.55 // of the best score, for a third sentence and on
		if qt == qDiff {
			keep = 0.55 // a comparison wants both sides
		}
		if next < 0 || (len(chosen) >= 2 && cands[next].score < keep*cands[best].score) {
			break
		}
		chosen = append(chosen, next)
		length += len(cands[next].text)
	}
	var b strings.Builder
	out := make([]Chosen, 0, len(chosen))
	used := map[string]bool{}
	for _, i := range chosen {
		c := cands[i]
		// No sentence twice (a pronoun's predecessor may be quoted already).
		var fresh []string
		for _, s := range answer.Sentences(c.text) {
			if k := strings.ToLower(s); !used[k] {
				used[k] = true
				fresh = append(fresh, s)
			}
		}
		if len(fresh) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		s := strings.TrimSpace(strings.Join(fresh, " "))
		end := "."
		if r, size := utf8.DecodeLastRuneInString(s); strings.ContainsRune(".!?", r) {
			s, end = s[:len(s)-size], string(r)
		} else if strings.HasSuffix(s, ":") {
			s = strings.TrimSuffix(s, ":")
		}
		fmt.Fprintf(&b, "%s [%d]%s", s, c.src+1, end)
		out = append(out, Chosen{Passage: c.passage, Sentence: c.index, Source: c.src + 1})
	}
	return b.String(), out
}

// defaultBoost raises, for a question about a default, the passages that
// state one ("default" is no retrieval term: it is on every page).
const defaultBoost = 1.3

// preferAnswerType re-ranks passages for the kind of answer the question
// wants: for a question about a default, passages that state a default
// come first among equals.
//
// A question that names an API ("shutil.copy2()", "__repr__",
// "ZeroDivisionError") asks first of all about that API's entry: the
// passages whose term defines a named API are raised by namedBoost.
func preferAnswerType(question string, ranked []Scored) []Scored {
	defaults := classify(question) == qValue && reDeflt.MatchString(question)
	names, defined := apiNames(question), definedNames(question)
	if !defaults && len(names) == 0 && len(defined) == 0 {
		return ranked
	}
	out := make([]Scored, len(ranked))
	copy(out, ranked)
	var key map[string]bool
	if defaults {
		key = set(Terms(question))
	}
	for i := range out {
		if defaults && cueDefault.MatchString(out[i].Text) {
			out[i].Score *= defaultBoost
			if defaultOf(out[i].Text, key) {
				out[i].Score *= defaultBoost
			}
		}
		if len(names) > 0 && definesName(out[i].Passage, names) {
			out[i].Score *= namedBoost
		}
		if len(defined) > 0 && definesName(out[i].Passage, defined) {
			out[i].Score *= definedBoost
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Score > out[b].Score })
	return out
}

// namedBonus raises a sentence of the entry of an API the question names.
const namedBonus = 0.15

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

// defaultOf reports whether text speaks of the default of what the
// question asks about: "default" next to one of its key terms, within
// two words ("the default protocol", "the protocol defaults to").
func defaultOf(text string, key map[string]bool) bool {
	ws := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
	for i, w := range ws {
		if !strings.HasPrefix(w, "default") {
			continue
		}
		for j := max(0, i-2); j <= min(len(ws)-1, i+2); j++ {
			if j == i {
				continue
			}
			for _, t := range Terms(ws[j]) {
				if key[t] {
					return true
				}
			}
		}
	}
	return false
}

// namedBoost raises the passages that define an API the question names.
const namedBoost = 1.4

// reAPIName finds what looks like an API name in a question: a dotted
// name, a call ("round()"), a name with an underscore or a CamelCase name
// with an inner capital ("ZeroDivisionError").
var reAPIName = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?`)

// apiNames returns the API names of question, lower case, without "()".
func apiNames(question string) []string {
	var out []string
	for _, m := range reAPIName.FindAllString(question, -1) {
		call := strings.HasSuffix(m, "()")
		name := strings.TrimSuffix(m, "()")
		inner := strings.IndexFunc(strings.TrimLeft(name, "_")[min(1, len(strings.TrimLeft(name, "_"))):], unicode.IsUpper) >= 0
		if call || strings.ContainsAny(name, "._") || inner {
			out = append(out, strings.ToLower(name))
		}
	}
	return out
}

// reDefined finds what a definition question asks about: "decorator" in
// "What is a decorator in Python?", "generators" in "What are generators?".
var reDefined = regexp.MustCompile(`(?i)^\s*(?:what(?:'s| is| are)|define|what does)\s+(?:an?\s+|the\s+)?(.+?)(?:\s+(?:in python|mean|stand for))?\s*\??\s*$`)

// askedNames are the names whose entries answer question: the APIs it
// names, and what a definition question asks about.
func askedNames(question string) []string {
	return append(apiNames(question), definedNames(question)...)
}

// definedNames is, for a definition question, the thing it asks about (as
// written and singular), as a glossary would name it.
func definedNames(question string) []string {
	if classify(question) != qDefine {
		return nil
	}
	m := reDefined.FindStringSubmatch(question)
	if m == nil || len(strings.Fields(m[1])) > 4 {
		return nil
	}
	w := strings.ToLower(strings.Trim(m[1], `"'“”‘’`))
	names := []string{w}
	if strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		names = append(names, strings.TrimSuffix(w, "s"))
	}
	return names
}

// definedBoost raises the entry (a glossary's, an API's) of what a
// definition question asks about: the entry is the definition.
const definedBoost = 2.5

// definesName reports whether p opens with a term that names one of names
// (in full, or as the last part of a dotted name).
func definesName(p answer.Passage, names []string) bool {
	if p.Kinds == "" || p.Kinds[0] != 't' {
		return false
	}
	line, _, _ := strings.Cut(p.Text, "\n")
	term := strings.ToLower(strings.TrimSuffix(termName(line), "()"))
	if term == "" {
		return false
	}
	for _, n := range names {
		if term == n || strings.HasSuffix(term, "."+n) {
			return true
		}
	}
	return false
}

// reCommand is a one-line shell command: a program and its arguments.
var reCommand = regexp.MustCompile(`^(?:\$ |% )?([a-z][a-z0-9_.-]*)( +[^\s]+){1,8}$`)

// codeWords open a line of program code, not a shell command.
var codeWords = map[string]bool{"import": true, "from": true, "def": true, "class": true, "return": true, "print": true,
	"for": true, "if": true, "elif": true, "else": true, "while": true, "with": true, "del": true, "raise": true, "assert": true,
	"yield": true, "lambda": true, "pass": true, "try": true, "except": true, "finally": true, "global": true, "nonlocal": true,
	"async": true, "await": true, "var": true, "let": true, "const": true, "function": true, "select": true, "insert": true,
	"update": true, "delete": true, "create": true, "alter": true, "drop": true}

// command returns code that is a one-line shell command ("python3 -m venv
// tutorial-env"), without its prompt.
func command(code string) (string, bool) {
	code = strings.TrimSpace(code)
	if len(code) > 80 || strings.ContainsAny(code, "\n(){}=;<>|&`'\"") {
		return "", false
	}
	m := reCommand.FindStringSubmatch(code)
	if m == nil {
		return "", false
	}
	if codeWords[m[1]] {
		return "", false // a statement, not a command
	}
	return strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(code, "$ "), "% "), " "), true
}

// termPrefixes are the keywords before a name in an API entry's term.
var termPrefixes = []string{"exception ", "class ", "abstractmethod ", "classmethod ", "staticmethod ", "property ",
	"coroutine ", "async ", "await ", "awaitable ", "method ", "function ", "attribute ", "data ", "opcode ", "decorator "}

var (
	reIdent    = regexp.MustCompile(`^[A-Za-z_][\w.]*[A-Za-z0-9_]$`)
	reTermWord = regexp.MustCompile(`^[A-Za-z][A-Za-z '-]{0,38}[A-Za-z]$`)
)

// termName is what a definition term names, for a sentence of its
// description to carry: "shutil.copy2()" for "shutil.copy2(src, dst, *,
// follow_symlinks=True)", "ModuleNotFoundError" for "exception
// ModuleNotFoundError", "decorator" for a glossary's "decorator"; "" when
// the term is no plain name.
func termName(term string) string {
	t := strings.TrimSpace(term)
	kind := ""
	for again := true; again; {
		again = false
		for _, p := range termPrefixes {
			if strings.HasPrefix(t, p) {
				t, kind, again = strings.TrimSpace(t[len(p):]), p, true
			}
		}
	}
	name, call := t, false
	if i := strings.IndexByte(t, '('); i > 0 {
		name, call = t[:i], true
	}
	switch {
	case reIdent.MatchString(name):
		if call && kind != "class " && kind != "exception " {
			return name + "()"
		}
		return name
	case !call && reTermWord.MatchString(t):
		return t
	}
	return ""
}

// mentions reports whether s names subject (its last dotted part, in any
// case).
func mentions(s, subject string) bool {
	name := strings.TrimSuffix(subject, "()")
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return strings.Contains(strings.ToLower(s), strings.ToLower(name))
}

// quotable reports whether a sentence can stand in an answer's prose: not
// code, markup or navigation, with letters enough to be a sentence.
func quotable(s string) bool {
	if codeLike.MatchString(s) {
		return false
	}
	letters, symbols := 0, 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case strings.ContainsRune("(){}[]=<>_*|\\/", r):
			symbols++
		}
	}
	return letters >= 12 && symbols*6 < letters
}

// changeNote opens a version note.
var changeNote = regexp.MustCompile(`^(Changed|New|Deprecated|Removed) (in|since) version\b`)

// diffWords are the terms that make a question a comparison.
var diffWords = map[string]bool{}

func init() {
	for _, w := range []string{"difference", "differences", "differ", "different", "compare", "comparison", "versus", "vs"} {
		for _, t := range Terms(w) {
			diffWords[t] = true
		}
	}
}

// sideBonus favours, for a comparison, a sentence about a side no chosen
// sentence speaks of yet.
const sideBonus = 0.2

// reSides find the two things a comparison compares.
var reSides = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bbetween\s+(.+?)\s+and\s+(.+?)\s*[?.!]*$`),
	regexp.MustCompile(`(?i)\b(?:does|do|is|are)\s+(.+?)\s+differ\s+from\s+(.+?)\s*[?.!]*$`),
	regexp.MustCompile(`(?i)^(?:\s*(?:compare|comparing)\s+)?(.+?)\s+(?:vs\.?|versus|compared (?:to|with))\s+(.+?)\s*[?.!]*$`),
}

// comparedSides returns, for a comparison of A and B, the key terms of A
// with those neither side names (the shared ones), and likewise of B;
// nil when the question names no two sides.
func comparedSides(question string, key []string) [][]string {
	for _, re := range reSides {
		m := re.FindStringSubmatch(question)
		if m == nil {
			continue
		}
		a, b := set(Terms(m[1])), set(Terms(m[2]))
		var onlyA, onlyB, shared []string
		for _, t := range key {
			switch {
			case a[t] && !b[t]:
				onlyA = append(onlyA, t)
			case b[t] && !a[t]:
				onlyB = append(onlyB, t)
			default:
				shared = append(shared, t)
			}
		}
		if len(onlyA) == 0 || len(onlyB) == 0 {
			return nil
		}
		return [][]string{append(onlyA, shared...), append(onlyB, shared...)}
	}
	return nil
}

func set(ts []string) map[string]bool {
	m := make(map[string]bool, len(ts))
	for _, t := range ts {
		m[t] = true
	}
	return m
}

// coverage is the weighted share of terms candidate i holds: a term in the
// sentence counts whole, one of its page title or heading path at
// contextWeight, one of a neighbouring sentence at half.
func coverage(cands []candidate, i int, terms []string, weight map[string]float64) float64 {
	c := &cands[i]
	cov, total := 0.0, 0.0
	for _, t := range terms {
		total += weight[t]
		switch {
		case c.terms[t]:
			cov += weight[t]
		case c.context[t]:
			cov += contextWeight * weight[t]
		case neighbourHas(cands, i, t):
			cov += 0.5 * weight[t]
		}
	}
	if total == 0 {
		return 0
	}
	return cov / total
}

// newSide reports whether candidate i speaks of one compared side only
// (holds its own terms), and one no chosen sentence speaks of alone yet.
func newSide(cands []candidate, chosen []int, i int, sides [][]string) bool {
	s := onlySide(cands[i], sides)
	if s < 0 {
		return false
	}
	for _, j := range chosen {
		if onlySide(cands[j], sides) == s {
			return false
		}
	}
	return true
}

// subjectOfSide reports whether text opens with (within its first three
// terms) the own term of exactly one compared side.
func subjectOfSide(text string, sides [][]string) bool {
	if len(sides) == 0 {
		return false
	}
	ts := Terms(text)
	ts = ts[:min(3, len(ts))]
	n := 0
	for _, side := range sides {
		if slices.Contains(ts, side[0]) {
			n++
		}
	}
	return n == 1
}

// onlySide is the one compared side c speaks of, or -1 when it speaks of
// none or of both.
func onlySide(c candidate, sides [][]string) int {
	only := -1
	for s, side := range sides {
		if speaksOf(c, side) {
			if only >= 0 {
				return -1
			}
			only = s
		}
	}
	return only
}

// speaksOf reports whether c holds the first term of side (a side's own
// terms come first).
func speaksOf(c candidate, side []string) bool { return len(side) > 0 && c.terms[side[0]] }

func neighbourHas(cands []candidate, i int, t string) bool {
	for _, j := range []int{i - 1, i + 1} {
		if j >= 0 && j < len(cands) && cands[j].passage == cands[i].passage && cands[j].terms[t] {
			return true
		}
	}
	return false
}

// closeness is 0 to 1: how near each other the key terms stand in s.
func closeness(s string, key []string) float64 {
	ts := Terms(s)
	pos := make([][]int32, len(key))
	for i, t := range ts {
		for q, k := range key {
			if t == k {
				pos[q] = append(pos[q], int32(i))
			}
		}
	}
	return proximity(pos)
}

// cue is 0 to 1: how much s looks like the kind of answer the question
// wants.
func cue(qt qtype, s, question string) float64 {
	switch qt {
	case qValue:
		v := 0.0
		if cueNumber.MatchString(versionRef.ReplaceAllString(s, "")) {
			v += 0.5
		}
		// A question about a default is answered by the sentence that
		// states one: it weighs more than any other cue.
		if cueDefault.MatchString(s) && reDeflt.MatchString(question) {
			v += 1.2
			if cueDefaultValue.MatchString(s) {
				// ... and most the sentence that says what it is.
				v += 0.6
			}
		}
		return v
	case qDefine:
		if cueDefinition.MatchString(s) {
			return 1
		}
	case qHowTo:
		if cueHowTo.MatchString(s) {
			return 1
		}
	case qDiff:
		if cueContrast.MatchString(s) {
			return 1
		}
	case qError:
		if cueError.MatchString(s) {
			return 1
		}
	}
	return 0
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// overlaps reports whether candidate i repeats text of a chosen one (a
// sentence chosen with its predecessor, and the predecessor alone).
func overlaps(cands []candidate, chosen []int, i int) bool {
	for _, j := range chosen {
		if strings.Contains(cands[j].text, cands[i].text) || strings.Contains(cands[i].text, cands[j].text) {
			return true
		}
	}
	return false
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for t := range a {
		if b[t] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}
