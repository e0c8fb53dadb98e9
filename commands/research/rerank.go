package research

// Re-ranking passages for the question: its defaults, the APIs it names
// and what a definition question asks about.

import (
	"sort"
	"strings"
	"unicode"

	"github.com/arr-dev/arr/domain/answer"
)

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
		if nameMatches(term, n) {
			return true
		}
	}
	return false
}

// nameMatches reports whether term (lower case, without "()") is name or a
// dotted name whose last part it is ("json.dumps" for "dumps").
func nameMatches(term, name string) bool { return term == name || strings.HasSuffix(term, "."+name) }
