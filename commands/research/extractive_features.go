package research

import (
	"math"
	"slices"
)

// feature is one rule that scores a candidate sentence: its score adds
// weight times value.
type feature struct {
	name   string
	weight float64
	value  func(c *candidate, q question) float64
}

// features are the rules of the extractive writer's scoring, with their
// weights, in the order their contributions are added. Every rule that
// improves answers is one more line here.
var features = []feature{
	// The weighted share of the question's key terms the sentence holds
	// (coverage), raised by how close together they stand.
	{"coverage", 1, func(c *candidate, q question) float64 {
		return c.cov * (1 + closenessWeight*closeness(c.text, q.key))
	}},
	// A cue of the kind of answer the question wants (cue); the entry of
	// what a definition question asks about defines it.
	{"answer type cue", 0.35, func(c *candidate, q question) float64 {
		if q.kind == qDefine && c.named {
			return 1
		}
		return cue(q.kind, c.text, q.text)
	}},
	// The rank of its passage among the selected ones.
	{"passage rank", -0.03, func(c *candidate, _ question) float64 { return float64(c.rank) }},
	// Too short to say much (under 40 bytes) ...
	{"short", -0.15, func(c *candidate, _ question) float64 { return is(len(c.text) < 40) }},
	// ... or too long to quote (over 450).
	{"long", -0.1, func(c *candidate, _ question) float64 { return is(len(c.text) > 450) }},
	// "A shallow copy constructs ...": a compared side as the subject
	// says what it is.
	{"side as subject", sideBonus, func(c *candidate, q question) float64 { return is(subjectOfSide(c.text, q.sides)) }},
	// From the entry of an API the question names.
	{"named entry", 0.15, func(c *candidate, _ question) float64 { return is(c.named) }},
	// A version note says what changed, seldom what is.
	{"change note", -0.15, func(c *candidate, _ question) float64 { return is(changeNote.MatchString(c.text)) }},
}

// closenessWeight is how much the key terms standing together raise
// coverage: by up to 30%.
const closenessWeight = 0.3

// sideBonus favours, for a comparison, a sentence about a side: as its
// subject (a feature), and in selection one no chosen sentence speaks of
// yet.
const sideBonus = 0.2

// Coverage counts a key term a sentence lacks at contextWeight when its
// passage's page title or heading path holds it (an FAQ entry's heading is
// the question it answers), and at neighbourWeight when the sentence
// before or after it in the same passage does.
const (
	contextWeight   = 0.7
	neighbourWeight = 0.5
)

// unquotableScore is the score of a sentence that cannot stand in prose
// (code, markup, navigation): below any threshold.
const unquotableScore = -1

// scoreCandidates is the extractive writer's third stage: each quotable
// candidate's coverage (the best of the question's and, for a comparison,
// of either side's, since one side said of itself answers half of it) and
// its score by the features table.
func scoreCandidates(cands []candidate, q question, weight map[string]float64) {
	subj := q.subject.withRefs(cands)
	for i := range cands {
		c := &cands[i]
		if !quotable(c.text) {
			c.score = unquotableScore
			continue
		}
		if subj.offSubject(c, q.key) {
			// Another subject's fact is never stated (the subject model).
			c.off, c.score = true, unquotableScore
			continue
		}
		c.cov = coverage(cands, i, q.key, weight)
		for _, side := range q.sides {
			c.cov = max(c.cov, coverage(cands, i, side, weight))
		}
		c.score = score(c, q)
	}
}

// score adds up the features of c, in the table's order.
func score(c *candidate, q question) float64 {
	s := 0.0
	for _, f := range features {
		if v := f.value(c, q); v != 0 {
			s += f.weight * v
		}
	}
	return s
}

// termWeights weighs each key term by its rarity: its IDF in idx (the
// passages ranked), or without an index among the candidates.
func termWeights(key []string, cands []candidate, idx *Index) map[string]float64 {
	df := map[string]int{}
	for i := range cands {
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
	return weight
}

// coverage is the weighted share of terms candidate i holds: a term in the
// sentence counts whole, one of its page title or heading path at
// contextWeight, one of a neighbouring sentence at neighbourWeight.
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
			cov += neighbourWeight * weight[t]
		}
	}
	if total == 0 {
		return 0
	}
	return cov / total
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

// is is 1 for true, 0 for false: the value of a rule that holds or not.
func is(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
