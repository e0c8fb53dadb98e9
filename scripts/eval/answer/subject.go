package main

import (
	"fmt"
	"regexp"
	"strings"
)

// subjects finds, for the automatic "another subject" check, the
// identifiers of a kind a question's subject can be: a Python dotted name
// or function call, a Git command, an ARR_* variable, a command-line
// option, an HTTP header. An answer sentence that names an identifier of
// a kind the question asks about, which the question does not name and
// which is not inside the fact's own text, is flagged wrong_subject? for
// review: it may state another subject's fact. Safe for concurrent use.
type subjects struct {
	kinds []identKind
	// gitCommands are the Git commands "git NAME" may name (from the
	// corpus's git-NAME.html pages); "git-NAME" is always one.
	gitCommands map[string]bool
}

// identKind is one kind of identifier.
type identKind struct {
	name string
	// find returns the identifiers of text (raw, not lower-cased), in
	// their canonical form (lower case, "git NAME", no "()").
	find func(s *subjects, text string) []string
	// asked: the question's wording says it asks about this kind even
	// when it names none ("Which header ...").
	asked *regexp.Regexp
}

var (
	pyDotted  = regexp.MustCompile(`\b[A-Za-z_][A-Za-z0-9_]+(?:\.[A-Za-z_][A-Za-z0-9_]*)+`)
	pyCall    = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_.]*)\(`)
	gitDash   = regexp.MustCompile(`\bgit-([a-z][a-z0-9-]*[a-z0-9])\b`)
	gitSpace  = regexp.MustCompile(`\bgit ([a-z][a-z0-9-]*[a-z0-9])\b`)
	arrVar    = regexp.MustCompile(`\bARR_[A-Z0-9_]*[A-Z0-9]\b`)
	option    = regexp.MustCompile(`(?:^|[\s(\x60"'\[])(--[a-z][a-z0-9-]*[a-z0-9]|-[A-Za-z])\b`)
	headerX   = regexp.MustCompile(`\bX-[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\b`)
	headerStd = regexp.MustCompile(`\b(?:Authorization|Idempotency-Key|Retry-After|Content-Type|Cache-Control|ETag|If-None-Match|If-Match|Last-Modified|WWW-Authenticate|Traceparent|Tracestate|Webhook-Signature|Webhook-Id|Webhook-Timestamp|Api-Key|Proxy-Authorization|Content-Length|Accept-Encoding|Content-Encoding)\b`)
)

// fileSuffixes end dotted words that are file or host names, not Python
// names.
var fileSuffixes = map[string]bool{"html": true, "htm": true, "txt": true, "md": true, "py": true, "json": true, "org": true,
	"com": true, "net": true, "io": true, "gz": true, "xz": true, "zip": true, "cfg": true, "toml": true, "yaml": true, "yml": true,
	"ini": true, "go": true, "sh": true, "sql": true, "log": true, "jsonl": true, "csv": true}

func newSubjects(gitCommands map[string]bool) *subjects {
	return &subjects{gitCommands: gitCommands, kinds: []identKind{
		{name: "dotted name or call", find: (*subjects).python},
		{name: "git", find: (*subjects).git, asked: regexp.MustCompile(`(?i)\bwhich (git )?(sub)?command\b`)},
		{name: "arr variable", find: func(_ *subjects, t string) []string { return lowerAll(arrVar.FindAllString(t, -1)) },
			asked: regexp.MustCompile(`(?i)\b(environment )?variable\b|\bsetting\b|\bconfigur`)},
		{name: "option", find: (*subjects).options, asked: regexp.MustCompile(`(?i)\b(option|flag)s?\b`)},
		{name: "header", find: (*subjects).headers, asked: regexp.MustCompile(`(?i)\bheaders?\b`)},
	}}
}

func lowerAll(ss []string) []string {
	for i := range ss {
		ss[i] = strings.ToLower(ss[i])
	}
	return ss
}

func (s *subjects) python(text string) []string {
	var out []string
	for _, m := range pyDotted.FindAllString(text, -1) {
		parts := strings.Split(m, ".")
		if fileSuffixes[strings.ToLower(parts[len(parts)-1])] {
			continue
		}
		out = append(out, strings.ToLower(m))
	}
	for _, m := range pyCall.FindAllStringSubmatch(text, -1) {
		if !strings.Contains(m[1], ".") { // dotted calls are counted above
			out = append(out, strings.ToLower(m[1]))
		}
	}
	return out
}

func (s *subjects) git(text string) []string {
	var out []string
	for _, m := range gitDash.FindAllStringSubmatch(text, -1) {
		out = append(out, "git "+m[1])
	}
	for _, m := range gitSpace.FindAllStringSubmatch(text, -1) {
		if s.gitCommands[m[1]] {
			out = append(out, "git "+m[1])
		}
	}
	return out
}

func (s *subjects) options(text string) []string {
	var out []string
	for _, m := range option.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1]) // -D and -d differ
	}
	return out
}

func (s *subjects) headers(text string) []string {
	return lowerAll(append(headerX.FindAllString(text, -1), headerStd.FindAllString(text, -1)...))
}

// named is the set of identifiers a question names, with every component
// of its dotted names ("json.dumps" names json.dumps, json and dumps).
func named(ids []string) map[string]bool {
	m := map[string]bool{}
	for _, id := range ids {
		m[id] = true
		for _, p := range strings.Split(id, ".") {
			m[p] = true
		}
	}
	return m
}

// isNamed: id is one of the question's names, or its last component is
// (the question names json.dumps, the answer dumps()).
func isNamed(id string, names map[string]bool) bool {
	if names[id] {
		return true
	}
	parts := strings.Split(id, ".")
	return names[parts[len(parts)-1]]
}

// suspects returns, for each sentence of the answer (markers removed,
// white space collapsed) that names an identifier of a kind the question
// asks about which the question does not name and which is not inside
// the fact's own text (factSpans: the normalized text the fact's matchers
// matched in that sentence), a note `ID in "sentence"`.
func (s *subjects) suspects(questionText string, sentences []string, factSpans func(sentence string) []string) []string {
	var out []string
	for _, k := range s.kinds {
		asked := k.find(s, questionText)
		if len(asked) == 0 && (k.asked == nil || !k.asked.MatchString(questionText)) {
			continue
		}
		names := named(asked)
		for _, sen := range sentences {
			spans := factSpans(sen)
			for _, id := range k.find(s, sen) {
				if isNamed(id, names) || inAny(strings.ToLower(id), spans) {
					continue
				}
				out = append(out, fmt.Sprintf("%s %q in %q", k.name, id, clip(sen, 160)))
				break
			}
		}
	}
	return out
}

// inAny: id is inside one of the fact's spans; an option's name counts
// without its dashes when it is 3 characters or more (a fact pattern
// "delete\W+force" states --delete --force).
func inAny(id string, spans []string) bool {
	if core := strings.TrimLeft(id, "-"); len(core) >= 3 {
		id = core
	}
	for _, sp := range spans {
		if strings.Contains(sp, id) {
			return true
		}
	}
	return false
}

// spans returns the text every matcher of alt matches in normalized.
func spans(alt []matcher, normalized string) []string {
	var out []string
	for _, m := range alt {
		if m.re != nil {
			out = append(out, m.re.FindAllString(normalized, -1)...)
			continue
		}
		if strings.Contains(normalized, m.lit) {
			out = append(out, m.lit)
		}
	}
	return out
}
