package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// question is one entry of the question file.
type question struct {
	// ID is "q" and a number; the number fixes the split (heldoutSplit).
	ID       string `json:"id"`
	Question string `json:"question"`
	// Kind groups questions for reading the results: default, table,
	// context, howto, difference, exception, definition.
	Kind string `json:"kind"`
	// Facts are alternatives; an answer states the fact when every string
	// of one alternative matches it (see matcher).
	Facts [][]string `json:"facts"`
	// Pages are the documentation pages (paths under the HTML root) that
	// state the fact.
	Pages []string `json:"pages"`
	// Split is "tune" or "heldout", as heldoutSplit says for the ID.
	Split string `json:"split"`
	// Wrong (answerable questions, optional) are statements of
	// neighbouring subjects on the corpus's pages (another option's
	// default, another command's behaviour): an answer that matches one
	// states something about another subject than the question's
	// (wrong_subject). Each must match a listed page (-check).
	Wrong []string `json:"wrong,omitempty"`
	// Absent (kind "unanswerable" only, required) are patterns any
	// statement of the answer would match; -check verifies that no listed
	// page matches one, so the answer is not in the index. Such a question
	// has no facts; its pages, if any, are the closest ones on its topic.
	Absent []string `json:"absent,omitempty"`

	alts   [][]matcher
	wrong  []matcher
	absent []matcher
}

// unanswerable reports whether the index holds no answer to q: the right
// reply abstains (answer_found false).
func (q question) unanswerable() bool { return q.Kind == "unanswerable" }

// matcher is one string of a fact: a case-insensitive substring of the
// normalized text, or with the prefix "re:" a regular expression over it.
type matcher struct {
	src string
	lit string
	re  *regexp.Regexp
}

func (m matcher) match(normalized string) bool { return m.find(normalized) >= 0 }

// find returns where m first matches normalized, or -1.
func (m matcher) find(normalized string) int {
	if m.re != nil {
		if loc := m.re.FindStringIndex(normalized); loc != nil {
			return loc[0]
		}
		return -1
	}
	return strings.Index(normalized, m.lit)
}

// heldoutSplit is the split rule, fixed before any result was seen: every
// question whose number is a multiple of every (3 for the Python manual's
// questions, 2 for the Git manual's: half of them) is held out.
func heldoutSplit(id string, every int) (string, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "q"))
	if err != nil || !strings.HasPrefix(id, "q") || n <= 0 {
		return "", fmt.Errorf("id %q is not q and a positive number", id)
	}
	if n%every == 0 {
		return "heldout", nil
	}
	return "tune", nil
}

func validKind(k string) bool {
	switch k {
	case "default", "table", "context", "howto", "difference", "exception", "definition", "unanswerable":
		return true
	}
	return false
}

// loadQuestions reads and checks the question file: ids and questions
// unique, the split the rule's, every fact compiles, every page listed.
func loadQuestions(path string, every int, n *normalizer) ([]question, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the questions: %w", err)
	}
	var qs []question
	if err := json.Unmarshal(b, &qs); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	var errs []error
	ids, texts := map[string]bool{}, map[string]bool{}
	for i := range qs {
		q := &qs[i]
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("%s: %s", q.ID, fmt.Sprintf(format, a...)))
		}
		split, err := heldoutSplit(q.ID, every)
		if err != nil {
			bad("%v", err)
		} else if q.Split != split {
			bad("split is %q but the rule (every id divisible by %d held out) says %q", q.Split, every, split)
		}
		if ids[q.ID] {
			bad("id used twice")
		}
		ids[q.ID] = true
		norm := n.text(q.Question)
		if norm == "" || texts[norm] {
			bad("question empty or asked twice")
		}
		texts[norm] = true
		if !validKind(q.Kind) {
			bad("kind %q is not one of default, table, context, howto, difference, exception, definition, unanswerable", q.Kind)
		}
		for _, e := range q.compile(n) {
			bad("%s", e)
		}
	}
	return qs, errors.Join(errs...)
}

// compile checks the shape of q's facts, wrong statements and absent
// patterns for its kind and compiles them; it returns the defects.
func (q *question) compile(n *normalizer) []string {
	var bad []string
	if q.unanswerable() {
		if len(q.Facts) > 0 || len(q.Wrong) > 0 {
			bad = append(bad, "an unanswerable question has no facts and no wrong statements")
		}
		if len(q.Absent) == 0 {
			bad = append(bad, "an unanswerable question needs the absent patterns -check looks for")
		}
	} else {
		if len(q.Facts) == 0 || len(q.Pages) == 0 {
			bad = append(bad, "needs at least one fact alternative and one page")
		}
		if len(q.Absent) > 0 {
			bad = append(bad, "absent patterns are for unanswerable questions")
		}
	}
	compile := func(what string, ss []string) []matcher {
		var ms []matcher
		for _, s := range ss {
			m, err := n.matcher(s)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s %q: %v", what, s, err))
				continue
			}
			ms = append(ms, m)
		}
		return ms
	}
	for _, alt := range q.Facts {
		if len(alt) == 0 {
			bad = append(bad, "empty fact alternative")
		}
		q.alts = append(q.alts, compile("fact", alt))
	}
	q.wrong = compile("wrong statement", q.Wrong)
	q.absent = compile("absent pattern", q.Absent)
	return bad
}

// anyMatch returns the source of the first of ms that matches normalized
// text, or "".
func anyMatch(ms []matcher, normalized string) string {
	for _, m := range ms {
		if m.match(normalized) {
			return m.src
		}
	}
	return ""
}

// pick returns the questions of split ("all" is every one).
func pick(qs []question, split string) []question {
	var out []question
	for _, q := range qs {
		if split == "all" || q.Split == split {
			out = append(out, q)
		}
	}
	return out
}

// matches returns the index of the first alternative whose strings all
// match normalized text, or -1.
func (q question) matches(normalized string) int {
	for i, alt := range q.alts {
		if allMatch(alt, normalized) {
			return i
		}
	}
	return -1
}

// matching returns the indexes of every alternative whose strings all
// match normalized text.
func (q question) matching(normalized string) []int {
	var out []int
	for i, alt := range q.alts {
		if allMatch(alt, normalized) {
			out = append(out, i)
		}
	}
	return out
}

func allMatch(alt []matcher, normalized string) bool {
	for _, m := range alt {
		if !m.match(normalized) {
			return false
		}
	}
	return len(alt) > 0
}

// context is the text around m's first match in normalized, n bytes either
// side.
func (m matcher) context(normalized string, n int) string {
	i := m.find(normalized)
	if i < 0 {
		return ""
	}
	return "…" + normalized[max(0, i-n):min(len(normalized), i+n)] + "…"
}
