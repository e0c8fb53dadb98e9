package research

// Questions: what kind of answer a question wants (classify), the cues
// of that kind in a sentence, and what it names or compares.

import (
	"regexp"
	"strings"
	"unicode"
)

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

// diffWords are the terms that make a question a comparison.
var diffWords = map[string]bool{}

func init() {
	for _, w := range []string{"difference", "differences", "differ", "different", "compare", "comparison", "versus", "vs"} {
		for _, t := range Terms(w) {
			diffWords[t] = true
		}
	}
}

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
