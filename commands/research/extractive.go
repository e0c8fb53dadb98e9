package research

import (
	"fmt"
	"math"
	"slices"
	"strings"
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

// sideBonus favours, for a comparison, a sentence about a side no chosen
// sentence speaks of yet.
const sideBonus = 0.2

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
