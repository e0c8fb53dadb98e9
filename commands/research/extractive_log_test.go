package research

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The feature log holds, for an answer, every quotable candidate with one
// value per lead feature, in their order, and the lead score those values
// and their weights make.
func TestFeatureLog(t *testing.T) {
	var buf bytes.Buffer
	log := &featureLog{w: &buf}
	srcs := []numbered{source("gc", [2]string{"tpp", "gc.auto\nWhen there are more loose objects than this, git gc --auto packs them.\nThe default value is 6700."},
		[2]string{"c", "$ git gc --auto --quiet"})}
	text, _ := extractive("What is the default value of gc.auto?", srcs, nil, log)
	if !strings.Contains(text, "6700") {
		t.Fatalf("answer %q", text)
	}
	var line FeatureLine
	if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &line); err != nil {
		t.Fatalf("the log is no JSON line: %v: %q", err, buf.String())
	}
	if line.Question != "What is the default value of gc.auto?" || !slices.Equal(line.Features, FeatureNames()) {
		t.Fatalf("question %q, features %q", line.Question, line.Features)
	}
	if len(line.Candidates) != 2 {
		t.Fatalf("%d candidates logged, want the 2 quotable ones: %+v", len(line.Candidates), line.Candidates)
	}
	for _, c := range line.Candidates {
		sum := 0.0
		for i, f := range leadFeatures {
			sum += f.weight * c.Values[i]
		}
		if len(c.Values) != len(leadFeatures) || c.Score != sum {
			t.Fatalf("candidate %q: values %v, score %v, want the weighted sum %v", c.Text, c.Values, c.Score, sum)
		}
	}
	// A nil log writes nothing and answers the same.
	again, _ := extractive("What is the default value of gc.auto?", srcs, nil, nil)
	if again != text {
		t.Fatalf("answer without a log %q, with one %q", again, text)
	}
}

// leadFirst puts the chosen sentence of the best lead first and keeps the
// others' order; selection's choice is unchanged.
func TestLeadFirst(t *testing.T) {
	cands := []candidate{{lead: 1}, {lead: 3}, {lead: 2}, {lead: 3}}
	for _, tc := range []struct{ chosen, want []int }{
		{[]int{0, 2, 1, 3}, []int{1, 0, 2, 3}},
		{[]int{3, 1}, []int{3, 1}},
		{[]int{0}, []int{0}},
		{nil, nil},
	} {
		if got := leadFirst(cands, slices.Clone(tc.chosen), func(c *candidate) float64 { return c.lead }); !slices.Equal(got, tc.want) {
			t.Errorf("leadFirst(%v) = %v, want %v", tc.chosen, got, tc.want)
		}
	}
}

// A sentence that states the asked setting's default leads one that states
// another's, whatever selection scored first.
func TestLeadStatesTheAskedDefault(t *testing.T) {
	q := analyseQuestion("What is the default value of gc.auto?")
	cands := candidateSentences([]numbered{source("git-gc", [2]string{"tptp",
		"gc.autoPackLimit\nWhen there are more packs than this, git gc --auto consolidates them. The default value is 50.\ngc.auto\nThe default value is 6700."})}, q)
	weight := termWeights(q.key, cands, nil)
	scoreCandidates(cands, q, weight)
	l := newLeader(q, weight)
	best := 0
	for i := range cands {
		if l.score(&cands[i]) > cands[best].lead {
			best = i
		}
	}
	if !strings.Contains(cands[best].text, "6700") {
		t.Fatalf("the best lead is %q", cands[best].text)
	}
}
