package research

import "regexp"

// The sentence that answers comes first. Selection (selectSentences)
// chooses what an answer says by the features table; leadFirst puts
// first, among the chosen, the sentence that says it most directly by the
// lead features: rules like the features table's, whose weights are
// fitted (listwise logistic regression: the sentence that states a
// question's fact over the other candidates) on the evaluation's tune
// questions and its training questions (scripts/eval/train), never the
// held-out ones: scripts/eval/answer -features writes the labelled
// candidates, scripts/eval/fit prints the weights.
var leadFeatures = []feature{
	// The weighted share of the question's key terms the sentence holds,
	// with its heading, term and neighbours (coverage) ...
	{"coverage", 2.84, func(c *candidate, _ question) float64 { return c.cov }},
	// ... the sentence alone, not the one it brings or its heading ...
	{"own coverage", 1.45, func(c *candidate, _ question) float64 { return c.ownCov }},
	// ... its heading and term only (a setting's "The default value is
	// 6700." under the term gc.auto) ...
	{"context coverage", 2.47, func(c *candidate, _ question) float64 { return c.ctxCov }},
	// ... its first four terms: what the sentence is about ...
	{"subject", 0.83, func(c *candidate, _ question) float64 { return c.subjCov }},
	// ... how close together they stand ...
	{"closeness", 0.37, func(c *candidate, q question) float64 { return closeness(c.text, q.key) }},
	// ... and the question's word pairs it repeats ("default protocol").
	{"phrase", -0.49, func(c *candidate, _ question) float64 { return c.phrase }},
	// For a default, a sentence that states one ("the default is 4",
	// "(default: 70)") ...
	{"states a default", 2.17, func(c *candidate, q question) float64 {
		return is(q.asksDefault && cueDefaultValue.MatchString(c.own))
	}},
	// ... or names one ("by default", "unless");
	{"names a default", 1.37, func(c *candidate, q question) float64 { return is(q.asksDefault && cueDefault.MatchString(c.own)) }},
	// for a value, a number or a unit (not a version);
	{"a value", 0.54, func(c *candidate, q question) float64 {
		return is(q.kind == qValue && cueNumber.MatchString(versionRef.ReplaceAllString(c.own, "")))
	}},
	// for "which exception", an exception's name ...
	{"names an exception", 1.27, func(c *candidate, q question) float64 { return is(q.kind == qError && cueErrorName.MatchString(c.own)) }},
	// ... or a raise;
	{"a raise", 1.36, func(c *candidate, q question) float64 { return is(q.kind == qError && cueRaise.MatchString(c.own)) }},
	// for "what is", a definition, or the entry of what it asks about;
	{"a definition", 0.35, func(c *candidate, q question) float64 {
		return is(q.kind == qDefine && (c.named || cueDefinition.MatchString(c.own)))
	}},
	// for "how do I", an instruction;
	{"an instruction", 0.48, func(c *candidate, q question) float64 { return is(q.kind == qHowTo && cueHowTo.MatchString(c.own)) }},
	// for "what is the difference", a contrast ...
	{"a contrast", 0.16, func(c *candidate, q question) float64 { return is(q.kind == qDiff && cueContrast.MatchString(c.own)) }},
	// ... and a compared side as the subject ("A shallow copy constructs
	// ...").
	{"side as subject", -0.09, func(c *candidate, q question) float64 { return is(subjectOfSide(c.text, q.sides)) }},
	// From the entry of a name the question asks about ...
	{"named entry", 0.39, func(c *candidate, _ question) float64 { return is(c.named) }},
	// ... or of another name, when it asks about one (gc.autoPackLimit's
	// for gc.auto).
	{"another entry", -0.40, func(c *candidate, q question) float64 { return is(c.entry != "" && !c.named && len(q.names) > 0) }},
	// The first sentence of its passage: what a section or entry says
	// first.
	{"first of its passage", 0.29, func(c *candidate, _ question) float64 { return is(c.index == 0) }},
	// The rank of its passage among the selected ones.
	{"passage rank", -0.33, func(c *candidate, _ question) float64 { return float64(c.rank) }},
	// Too short to say much (under 40 bytes) ...
	{"short", 0.51, func(c *candidate, _ question) float64 { return is(len(c.text) < 40) }},
	// ... or too long to quote (over 450).
	{"long", 0.01, func(c *candidate, _ question) float64 { return is(len(c.text) > 450) }},
	// Quoted with the sentence before it, which it needs.
	{"with its predecessor", 0.36, func(c *candidate, _ question) float64 { return is(c.text != c.own) }},
	// A version note says what changed, seldom what is.
	{"change note", -0.63, func(c *candidate, _ question) float64 { return is(changeNote.MatchString(c.text)) }},
}

var (
	// cueErrorName is an exception's name; cueRaise a raise or failure.
	cueErrorName = regexp.MustCompile(`\b[A-Z][A-Za-z]*(Error|Exception|Warning)\b`)
	cueRaise     = regexp.MustCompile(`(?i)\b(raise[sd]?|thrown?|fails?|error)\b`)
)

// leader scores candidates by the lead features for one question.
type leader struct {
	q      question
	weight map[string]float64
	qTerms []string
}

func newLeader(q question, weight map[string]float64) leader {
	return leader{q: q, weight: weight, qTerms: Terms(q.text)}
}

// score sets c's own-sentence features (from its own terms, read once)
// and returns, and keeps as c.lead, the sum of its lead features. Only
// the chosen candidates need it (and, for the feature log, every one).
func (l leader) score(c *candidate) float64 {
	ts := Terms(c.own)
	c.ownCov, c.ctxCov, c.subjCov = ownCoverage(ts, c.context, l.q.key, l.weight)
	c.phrase = phraseShare(ts, l.qTerms)
	s := 0.0
	for _, f := range leadFeatures {
		if v := f.value(c, l.q); v != 0 {
			s += f.weight * v
		}
	}
	c.lead = s
	return s
}

// leadFirst moves the chosen candidate of the best lead (the first of
// equals) to the front; the others keep their order.
func leadFirst(cands []candidate, chosen []int, lead func(*candidate) float64) []int {
	if len(chosen) < 2 {
		return chosen
	}
	best, bestLead := 0, lead(&cands[chosen[0]])
	for k, i := range chosen[1:] {
		if v := lead(&cands[i]); v > bestLead {
			best, bestLead = k+1, v
		}
	}
	out := append([]int{chosen[best]}, chosen[:best]...)
	return append(out, chosen[best+1:]...)
}

// ownCoverage is the weighted share of terms the own sentence's terms ts
// hold (own), that only its heading path or term (context) holds (ctx),
// and that the first four of ts hold (subj): what it is about.
func ownCoverage(ts []string, context map[string]bool, terms []string, weight map[string]float64) (own, ctx, subj float64) {
	has, head := set(ts), set(ts[:min(4, len(ts))])
	total := 0.0
	for _, t := range terms {
		total += weight[t]
		switch {
		case has[t]:
			own += weight[t]
		case context[t]:
			ctx += weight[t]
		}
		if head[t] {
			subj += weight[t]
		}
	}
	if total == 0 {
		return 0, 0, 0
	}
	return own / total, ctx / total, subj / total
}

// phraseShare is the share of the question's adjacent term pairs that
// stand next to each other, in the same order, in ts.
func phraseShare(ts, question []string) float64 {
	if len(question) < 2 {
		return 0
	}
	pairs := map[[2]string]bool{}
	for i := 0; i+1 < len(ts); i++ {
		pairs[[2]string{ts[i], ts[i+1]}] = true
	}
	hit := 0
	for i := 0; i+1 < len(question); i++ {
		if pairs[[2]string{question[i], question[i+1]}] {
			hit++
		}
	}
	return float64(hit) / float64(len(question)-1)
}
