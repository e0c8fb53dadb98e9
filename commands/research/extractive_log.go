package research

import (
	"encoding/json"
	"io"
	"sync"
)

// featureLog writes the extractive writer's candidates with the values of
// their lead features (Config.Features): the evaluation labels each by
// whether it states the question's fact and fits the lead features'
// weights to them (leadFeatures).
type featureLog struct {
	mu sync.Mutex
	w  io.Writer
}

// FeatureLine is one answer's line in the feature log.
type FeatureLine struct {
	Question string `json:"question"`
	// Features names the lead features, in the order of every
	// candidate's values.
	Features   []string           `json:"features"`
	Candidates []FeatureCandidate `json:"candidates"`
}

// FeatureCandidate is one quotable candidate sentence: its text as an
// answer would quote it, its lead features' values and its lead score.
type FeatureCandidate struct {
	Text   string    `json:"text"`
	Values []float64 `json:"values"`
	Score  float64   `json:"score"`
}

// FeatureNames are the names of the lead features, in order.
func FeatureNames() []string {
	names := make([]string, len(leadFeatures))
	for i, f := range leadFeatures {
		names[i] = f.name
	}
	return names
}

// write logs the quotable candidates of one answer; a nil log writes
// nothing. A failed write is not the answer's failure: it is dropped.
func (l *featureLog) write(question string, cands []candidate, lead leader) {
	if l == nil {
		return
	}
	line := FeatureLine{Question: question, Features: FeatureNames()}
	for i := range cands {
		c := &cands[i]
		if c.score == unquotableScore {
			continue
		}
		score := lead.score(c)
		vs := make([]float64, len(leadFeatures))
		for k, f := range leadFeatures {
			vs[k] = f.value(c, lead.q)
		}
		line.Candidates = append(line.Candidates, FeatureCandidate{Text: c.text, Values: vs, Score: score})
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(append(b, '\n'))
}
