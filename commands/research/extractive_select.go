package research

import (
	"math"
	"slices"
	"strings"
)

// The bounds of selection.
const (
	// minCoverage is the share of the question's key terms (by weight)
	// the best sentence must hold, with its neighbours, for the sources to
	// count as answering; a further sentence must hold half as much.
	minCoverage = 0.4
	// minScore is the score the best sentence must reach.
	minScore = 0.45
	// mmrLambda weighs relevance against likeness to the sentences
	// chosen (maximal marginal relevance).
	mmrLambda = 0.7
	// candidateShare of the best score makes a sentence a candidate for
	// a place after the first. (The writer also required 55% of the best
	// score from the third sentence on; every candidate holds 60%, so
	// that rule never applied and is gone.)
	candidateShare = 0.6
	// An answer holds at most maxSentences, and no further sentence once
	// it is maxAnswerBytes long.
	maxSentences   = 5
	maxAnswerBytes = 900
)

// selectSentences is the extractive writer's fourth stage: the indexes of
// the candidates to quote, in order; none when the best sentence (with
// its neighbours) does not hold most of what the question asks about, or
// does not name the thing it asks about (subject.covers), or lacks what
// it asks of it (holdsRelation): the evidence that a passage answers it
// is a sentence about its subject holding what it asks of it.
// After the best, each next sentence is the most relevant and least like
// those chosen (maximal marginal relevance).
func selectSentences(cands []candidate, q question) []int {
	best := bestCandidate(cands)
	if best < 0 || cands[best].score < minScore || cands[best].cov < minCoverage || !q.subject.covers(&cands[best]) ||
		!holdsRelation(cands, best, q.relation, q.weight) {
		return nil
	}
	chosen := []int{best}
	length := len(cands[best].text)
	for len(chosen) < maxSentences && length < maxAnswerBytes {
		next := nextCandidate(cands, chosen, q.sides)
		if next < 0 {
			break
		}
		chosen = append(chosen, next)
		length += len(cands[next].text)
	}
	return chosen
}

// bestCandidate is the index of the best-scored candidate (the first of
// equals); -1 when there is none.
func bestCandidate(cands []candidate) int {
	best := -1
	for i := range cands {
		if best < 0 || cands[i].score > cands[best].score {
			best = i
		}
	}
	return best
}

// nextCandidate is the candidate of the best marginal relevance to add to
// chosen (chosen[0] the best); -1 when none is eligible.
func nextCandidate(cands []candidate, chosen []int, sides [][]string) int {
	best := cands[chosen[0]]
	next, nextScore := -1, math.Inf(-1)
	for i := range cands {
		c := &cands[i]
		if c.score < candidateShare*best.score || c.cov < minCoverage/2 || slices.Contains(chosen, i) || overlaps(cands, chosen, i) {
			continue
		}
		if m := marginalRelevance(cands, chosen, i, sides); m > nextScore {
			next, nextScore = i, m
		}
	}
	return next
}

// marginalRelevance is candidate i's relevance less its likeness to the
// most alike chosen sentence. A side of a comparison said of itself shares
// the other's words ("string representation") without repeating it: a
// side no chosen sentence speaks of alone gets sideBonus instead.
func marginalRelevance(cands []candidate, chosen []int, i int, sides [][]string) float64 {
	if newSide(cands, chosen, i, sides) {
		return mmrLambda*cands[i].score + sideBonus
	}
	sim := 0.0
	for _, j := range chosen {
		sim = max(sim, jaccard(cands[i].terms, cands[j].terms))
	}
	return mmrLambda*cands[i].score - (1-mmrLambda)*sim
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
