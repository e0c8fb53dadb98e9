package research

import (
	"slices"
	"strings"
)

// question is what the extractive writer knows of a question: the first
// stage of its pipeline.
type question struct {
	text string
	kind qtype
	// key are the terms the answer must hold: what a definition question
	// asks about, else the question's terms (a comparison's without the
	// words that make it one).
	key []string
	// names are the names whose entries answer it (askedNames).
	names []string
	// sides are, for a comparison of A and B, A's key terms and B's
	// (comparedSides); nil otherwise.
	sides [][]string
	// asksDefault: a question about a value that names a default.
	asksDefault bool
	// subject is what it is about (questionSubject): a sentence about
	// another thing of its kind is no candidate.
	subject subject
	// relation are the terms of what it asks of its subject
	// (relationTerms), set once the terms are weighed.
	relation []string
	// weight are its key terms' weights (termWeights), once weighed.
	weight map[string]float64
}

// analyseQuestion is the extractive writer's question analysis. Its key
// is empty when the question holds no term to look for.
func analyseQuestion(text string) question {
	q := question{text: text, kind: classify(text), names: askedNames(text)}
	q.key = uniqueTerms(Terms(text))
	if d := definedNames(text); len(d) > 0 {
		// "What is a decorator in Python?" asks about "decorator"; the
		// rest is the setting.
		q.key = uniqueTerms(Terms(d[0]))
	}
	if q.kind == qDiff {
		// "difference" names the kind of question, not what it is about.
		q.key = slices.DeleteFunc(q.key, func(t string) bool { return diffWords[t] })
		q.sides = comparedSides(text, q.key)
	}
	q.asksDefault = q.kind == qValue && reDeflt.MatchString(text)
	// A dotted name ("gc.auto", "json.dumps") is a term of retrieval; to
	// the writer it is its parts, and the entry it names (named).
	q.key = slices.DeleteFunc(q.key, isDottedTerm)
	q.subject = questionSubject(text, q.names)
	return q
}

// isDottedTerm reports whether t is a dotted name's whole term.
func isDottedTerm(t string) bool { return dottedName.MatchString(t) && !strings.HasPrefix(t, "'") }
