package research

import (
	"fmt"
	"math"
	"regexp"
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
	cueNumber     = regexp.MustCompile(`(?i)(\b\d+(\.\d+)?\b|\b(none|true|false|zero|one|two|three|four|five|ten|infinite|unlimited)\b|\b(bytes?|seconds?|ms|kb|mb|gb|characters?|digits?|%|percent)\b)`)
	cueDefault    = regexp.MustCompile(`(?i)\b(default(s|ed)?( (is|to|value))?|by default|if (omitted|not (given|specified|provided))|unless)\b`)
	cueDefinition = regexp.MustCompile(`(?i)\b(is|are) (a|an|the)\b|\b(refers to|means|is defined as|is used to|represents?)\b`)
	cueHowTo      = regexp.MustCompile(`(?i)^(to |use |call |pass |set |run |add |create |write |open |import |you can |you should |the (easiest|simplest|recommended) way)|\b(use|call|pass|set|run|create|with the|using)\b`)
	cueContrast   = regexp.MustCompile(`(?i)\b(whereas|while|unlike|but|however|instead|rather than|in contrast|differs?|difference|only|both)\b`)
	cueError      = regexp.MustCompile(`\b[A-Z][A-Za-z]*(Error|Exception|Warning)\b|(?i)\braises?\b`)
	pronounStart  = regexp.MustCompile(`^(This|These|That|Those|It|Its|They|Their|Such|He|She|Here|There|Thus|Also|Otherwise|In this case|In that case)\b`)
	// codeLike marks a sentence that is code or markup, not prose.
	codeLike = regexp.MustCompile(`(^\s*(>>>|\$ |\.\.\.|#!|import |from \S+ import|def |class \w+[:(]|return |print\())|[{}]\s*$|^\s*[\[{"]|;\s*$|</?[a-z]+[ >]|&[a-z]+;|\b(Prev|Next|Up|Home|Navigation|index modules)\s*(\||$)`)
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
	terms   map[string]bool
	cov     float64         // weighted share of the question's key terms
	context map[string]bool // terms of its page title and heading path
	src     int
	passage string
	index   int // of the sentence in its passage
	rank    int // of its passage among the chosen ones
	score   float64
}

// extractive writes the answer to question from the sources' passages; ""
// when they do not answer it.
//
// Key terms weigh by their rarity in idx, the passages ranked (a word
// every page uses, like "python" in Python's manual, hardly counts).
func extractive(question string, srcs []numbered, idx *Index) (string, []Chosen) {
	qt := classify(question)
	key := uniqueTerms(Terms(question))
	if len(key) == 0 {
		return "", nil
	}
	// Each key term weighs by how rare it is among the passages' sentences.
	var cands []candidate
	rank := 0
	for si, s := range srcs {
		for _, p := range s.passages {
			ctxTerms := map[string]bool{}
			for _, t := range Terms(p.Title + " " + strings.Join(p.Heading, " ")) {
				ctxTerms[t] = true
			}
			n := 0 // sentence index within the passage
			for li, block := range strings.Split(p.Text, "\n") {
				if li < len(p.Kinds) && p.Kinds[li] == 't' {
					// A term (an API signature) is context, not prose.
					for _, t := range Terms(block) {
						ctxTerms[t] = true
					}
					continue
				}
				sents := answer.Sentences(block)
				for i, sen := range sents {
					c := candidate{text: sen, src: si, passage: p.ID, index: n, rank: rank, context: ctxTerms}
					n++
					if pronounStart.MatchString(sen) && i > 0 {
						c.text = sents[i-1] + " " + sen
					}
					cands = append(cands, c)
				}
			}
			rank++
		}
	}
	if len(cands) == 0 {
		return "", nil
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
	total := 0.0
	for _, t := range key {
		w := math.Log(1 + float64(len(cands)+1)/float64(df[t]+1))
		if idx != nil && idx.Len() > 0 {
			w = idx.IDF(t)
		}
		weight[t] = w
		total += w
	}
	// Neighbours: the terms of the sentences before and after in the same
	// passage block, for coverage at half weight.
	for i := range cands {
		c := &cands[i]
		if !quotable(c.text) {
			c.score = -1
			continue
		}
		cov := 0.0
		for _, t := range key {
			switch {
			case c.terms[t]:
				cov += weight[t]
			case c.context[t]:
				cov += contextWeight * weight[t]
			case neighbourHas(cands, i, t):
				cov += 0.5 * weight[t]
			}
		}
		cov /= total
		c.cov = cov
		c.score = cov*(1+0.3*closeness(c.text, key)) + 0.35*cue(qt, c.text, question) - 0.03*float64(c.rank)
		if n := len(c.text); n < 40 {
			c.score -= 0.15
		} else if n > 450 {
			c.score -= 0.1
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
			if m := lambda*cands[i].score - (1-lambda)*sim; m > nextScore {
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
func preferAnswerType(question string, ranked []Scored) []Scored {
	if classify(question) != qValue || !reDeflt.MatchString(question) {
		return ranked
	}
	out := make([]Scored, len(ranked))
	copy(out, ranked)
	for i := range out {
		if cueDefault.MatchString(out[i].Text) {
			out[i].Score *= defaultBoost
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Score > out[b].Score })
	return out
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
		if cueNumber.MatchString(s) {
			v += 0.5
		}
		// A question about a default is answered by the sentence that
		// states one: it weighs more than any other cue.
		if cueDefault.MatchString(s) && reDeflt.MatchString(question) {
			v += 1.2
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
