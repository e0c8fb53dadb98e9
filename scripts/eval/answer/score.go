package main

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// scores are one answer's marks and, for each mark not given, why.
type scores struct {
	Fact     bool `json:"fact"`
	Cited    bool `json:"cited"`
	Grounded bool `json:"grounded"`
	Readable bool `json:"readable"`
	// Lead: the answer's first statement (its text up to its first
	// citation marker) states the fact: the sentence that answers comes
	// first.
	Lead bool `json:"lead"`
	// Statements is the number of cited statements (citation groups) in
	// the answer: an answer that says more than it needs has more.
	Statements int `json:"statements"`
	// Abstained: the reply said the index holds no answer (answer_found
	// false). An answerable question that abstained has no fact.
	Abstained bool `json:"abstained"`
	// WrongSubject: the answer matches one of the question's wrong
	// statements (another subject's fact on the same pages).
	WrongSubject bool `json:"wrong_subject"`
	// Suspect are the answer's sentences the automatic check flags
	// wrong_subject? (subject.go), for review; counted apart.
	Suspect []string `json:"wrong_subject?,omitempty"`
	Why     []string `json:"why,omitempty"`
	// Diagnostics (not in the summary): whether any returned source is an
	// expected page, and whether any source's content states the fact.
	ExpectedPageReturned bool     `json:"expected_page_returned"`
	FactInSources        bool     `json:"fact_in_sources"`
	CitedPages           []string `json:"cited_pages"`
}

// scorer marks answers. Safe for concurrent use.
type scorer struct {
	norm   *normalizer
	corpus *corpus
	subj   *subjects

	marker   *regexp.Regexp
	tag      *regexp.Regexp
	entity   *regexp.Regexp
	nav      []*regexp.Regexp
	residue  *regexp.Regexp
	code     []*regexp.Regexp
	jsonKey  *regexp.Regexp
	sentence *regexp.Regexp
}

func newScorer(n *normalizer, c *corpus) *scorer {
	return &scorer{norm: n, corpus: c, subj: newSubjects(nil),
		marker: regexp.MustCompile(`\[([1-9][0-9]*)\]`),
		tag:    regexp.MustCompile(`(?i)</?(a|abbr|b|blockquote|br|caption|cite|code|dd|div|dl|dt|em|h[1-6]|hr|i|img|kbd|li|nav|ol|p|pre|samp|script|section|span|strong|style|sub|sup|table|tbody|td|th|thead|tr|tt|ul|var)(\s[^<>]*)?/?>`),
		entity: regexp.MustCompile(`&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z][a-zA-Z0-9]{1,31});`),
		nav: []*regexp.Regexp{
			regexp.MustCompile(`(?i)\bnavigation\b`),
			regexp.MustCompile(`(?i)\bindex\s*[|·]?\s*modules\b`),
			regexp.MustCompile(`(?i)\b(previous|next)\s+(topic|chapter|page)\b`),
			regexp.MustCompile(`(?i)\b(prev|previous|next|up)\s*[|»]|[|»]\s*(prev|previous|next|up)\b`),
			regexp.MustCompile(`(?i)\b(show source|report a bug|table of contents)\b`),
			regexp.MustCompile(`»[^»]{0,60}»`),
		},
		residue: regexp.MustCompile(`¶`),
		code: []*regexp.Regexp{
			regexp.MustCompile(`>>>`),
			regexp.MustCompile(`\bdef\s+[A-Za-z_]\w*\s*\(`),
			regexp.MustCompile(`(?m)(^|[:;]\s*|[.!?]["'”’)]*\s+)import\s+[A-Za-z_][\w.]*`),
			regexp.MustCompile(`\bfrom\s+[A-Za-z_.][\w.]*\s+import\s+[\w*(]`),
			regexp.MustCompile(`\b[A-Za-z_]\w*\s=\s[A-Za-z_][\w.]*\(`),
		},
		jsonKey:  regexp.MustCompile(`\{\s*"[^"]*"\s*:`),
		sentence: regexp.MustCompile(`[.!?]["')\]]*\s+`),
	}
}

// score marks one answer to q.
func (s *scorer) score(ctx context.Context, q question, r reply) scores {
	var sc scores
	why := func(format string, a ...any) { sc.Why = append(sc.Why, fmt.Sprintf(format, a...)) }
	answer := s.norm.answer(r.Answer)
	sc.Abstained = r.AnswerFound != nil && !*r.AnswerFound
	s.subject(q, r, answer, &sc)
	if q.unanswerable() {
		if !sc.Abstained {
			why("abstained: the index holds no answer, but the reply says one was found")
		}
		return sc
	}

	alts := q.matching(answer)
	if sc.Abstained {
		alts = nil
	}
	sc.Fact = len(alts) > 0
	switch {
	case sc.Abstained:
		why("fact: the reply abstained (answer_found false)")
	case !sc.Fact:
		why("fact: no alternative matches the answer (first wants %s)", describe(q.alts[0], answer))
	}
	first, n := s.statements(r.Answer)
	sc.Statements = n
	sc.Lead = sc.Fact && q.matches(s.norm.answer(first)) >= 0
	if sc.Fact && !sc.Lead {
		why("lead: the first statement does not state the fact")
	}

	expected := map[string]bool{}
	for _, p := range q.Pages {
		expected[p] = true
	}
	for _, src := range r.Sources {
		if p, _ := s.corpus.pagePath(src.URL); expected[p] {
			sc.ExpectedPageReturned = true
		}
		if q.matches(s.norm.text(src.Content)) >= 0 {
			sc.FactInSources = true
		}
	}

	cited, bad := s.citations(r.Answer, len(r.Sources))
	for _, i := range cited {
		p, _ := s.corpus.pagePath(r.Sources[i-1].URL)
		sc.CitedPages = append(sc.CitedPages, p)
	}
	switch {
	case len(bad) > 0:
		why("cited: marker(s) %v resolve to no source (%d sources)", bad, len(r.Sources))
	case len(cited) == 0:
		why("cited: the answer cites nothing")
	default:
		for _, p := range sc.CitedPages {
			sc.Cited = sc.Cited || expected[p]
		}
		if !sc.Cited {
			why("cited: cites %s, none of %s", strings.Join(sc.CitedPages, ", "), strings.Join(q.Pages, ", "))
		}
	}

	switch {
	case !sc.Fact:
		why("grounded: no fact to ground")
	case len(cited) == 0:
		why("grounded: nothing cited")
	default:
		var notes []string
		for _, i := range cited {
			u := r.Sources[i-1].URL
			p, ours := s.corpus.pagePath(u)
			if !ours {
				notes = append(notes, u+" is not a corpus page")
				continue
			}
			text, err := s.corpus.text(ctx, p)
			if err != nil {
				notes = append(notes, err.Error())
				continue
			}
			// An alternative the answer states, on the cited page.
			for _, a := range alts {
				sc.Grounded = sc.Grounded || allMatch(q.alts[a], text)
			}
			if sc.Grounded {
				break
			}
			notes = append(notes, p+" does not state it")
		}
		if !sc.Grounded {
			why("grounded: %s", strings.Join(notes, "; "))
		}
	}

	problems := s.readability(r.Answer)
	sc.Readable = len(problems) == 0
	for _, p := range problems {
		why("readable: %s", p)
	}
	return sc
}

// subject gives the wrong_subject mark (a wrong statement of q's matches
// the answer) and the wrong_subject? notes of the automatic check.
func (s *scorer) subject(q question, r reply, answer string, sc *scores) {
	if w := anyMatch(q.wrong, answer); w != "" {
		sc.WrongSubject = true
		sc.Why = append(sc.Why, fmt.Sprintf("wrong_subject: the answer states %q, another subject's fact", w))
	}
	alts := q.matching(answer)
	factSpans := func(sentence string) []string {
		n := s.norm.text(sentence)
		var out []string
		for _, a := range alts {
			out = append(out, spans(q.alts[a], n)...)
		}
		return out
	}
	sc.Suspect = s.subj.suspects(q.Question, s.sentences(s.norm.collapse(s.norm.stripMarkers(r.Answer))), factSpans)
	for _, n := range sc.Suspect {
		sc.Why = append(sc.Why, "wrong_subject?: "+n)
	}
}

// statements returns the answer's first statement (its text up to the
// end of the sentence its first citation marker stands in) and the number
// of statements (runs of markers: "... [1][2]." is one).
func (s *scorer) statements(answer string) (string, int) {
	locs := s.marker.FindAllStringIndex(answer, -1)
	if len(locs) == 0 {
		return answer, 0
	}
	n := 1
	for i := 1; i < len(locs); i++ {
		if strings.TrimSpace(answer[locs[i-1][1]:locs[i][0]]) != "" {
			n++
		}
	}
	first := len(answer)
	if end := s.sentence.FindStringIndex(answer[locs[0][1]:]); end != nil {
		first = locs[0][1] + end[0] + 1
	} else if i := strings.IndexAny(answer[locs[0][1]:], ".!?"); i >= 0 {
		first = locs[0][1] + i + 1
	}
	return strings.TrimSpace(answer[:first]), n
}

// citations returns the distinct markers of answer that resolve to one of
// n sources, in order of first use, and those that do not.
func (s *scorer) citations(answer string, n int) (ok, bad []int) {
	seen := map[int]bool{}
	for _, m := range s.marker.FindAllStringSubmatch(answer, -1) {
		i, err := strconv.Atoi(m[1])
		if err != nil || seen[i] {
			continue
		}
		seen[i] = true
		if i >= 1 && i <= n {
			ok = append(ok, i)
		} else {
			bad = append(bad, i)
		}
	}
	return ok, bad
}

// readability lists what makes the answer's prose unreadable: HTML,
// navigation runs, code or JSON, a repeated sentence, a length outside
// 80-1500 characters.
func (s *scorer) readability(answer string) []string {
	var out []string
	raw := s.norm.stripMarkers(answer)
	flat := s.norm.collapse(raw)
	if n := utf8.RuneCountInString(flat); n < 80 || n > 1500 {
		out = append(out, fmt.Sprintf("%d characters (wants 80-1500)", n))
	}
	if m := s.tag.FindString(raw); m != "" {
		out = append(out, fmt.Sprintf("HTML tag %q", m))
	}
	if m := s.entity.FindString(raw); m != "" {
		out = append(out, fmt.Sprintf("HTML entity %q", m))
	}
	for _, re := range s.nav {
		if m := re.FindString(raw); m != "" {
			out = append(out, fmt.Sprintf("navigation text %q", clip(m, 60)))
			break
		}
	}
	if s.residue.MatchString(raw) {
		out = append(out, "HTML residue \"¶\" (a heading's permalink)")
	}
	for _, line := range strings.Split(raw, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		switch {
		case strings.HasPrefix(trimmed, ">>>"), strings.HasPrefix(trimmed, "$ "), strings.HasPrefix(trimmed, `{"`):
			out = append(out, fmt.Sprintf("code line %q", clip(trimmed, 60)))
		case strings.TrimSpace(line) != "" && (strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")):
			out = append(out, fmt.Sprintf("indented line %q", clip(trimmed, 60)))
		default:
			continue
		}
		break
	}
	if strings.Count(raw, "{") != strings.Count(raw, "}") {
		out = append(out, fmt.Sprintf("unbalanced braces (%d { and %d })", strings.Count(raw, "{"), strings.Count(raw, "}")))
	}
	if m := s.jsonKey.FindString(raw); m != "" {
		out = append(out, fmt.Sprintf("JSON %q", m))
	}
	for _, re := range s.code {
		if m := re.FindString(raw); m != "" {
			out = append(out, fmt.Sprintf("code %q", clip(strings.TrimSpace(m), 60)))
			break
		}
	}
	seen := map[string]bool{}
	for _, sen := range s.sentences(flat) {
		k := strings.ToLower(strings.TrimRight(sen, ".!?\"') "))
		if len(k) < 12 {
			continue
		}
		if seen[k] {
			out = append(out, fmt.Sprintf("sentence repeated %q", clip(sen, 60)))
			break
		}
		seen[k] = true
	}
	return out
}

// sentences splits collapsed text after ., ! or ? followed by space.
func (s *scorer) sentences(text string) []string {
	var out []string
	last := 0
	for _, loc := range s.sentence.FindAllStringIndex(text, -1) {
		out = append(out, strings.TrimSpace(text[last:loc[1]]))
		last = loc[1]
	}
	if rest := strings.TrimSpace(text[last:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// describe names the strings of alt that text lacks.
func describe(alt []matcher, text string) string {
	var missing []string
	for _, m := range alt {
		if !m.match(text) {
			missing = append(missing, strconv.Quote(m.src))
		}
	}
	sort.Strings(missing)
	return strings.Join(missing, ", ")
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
