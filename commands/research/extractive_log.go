package research

import (
	"encoding/json"
	"io"
	"sync"
)

// featureLog writes the extractive writer's candidates with their feature
// values (Config.Features): the evaluation labels each by whether it
// states the question's fact and fits the features' weights to them.
type featureLog struct {
	mu sync.Mutex
	w  io.Writer
}

// FeatureLine is one answer's line in the feature log.
type FeatureLine struct {
	Question string `json:"question"`
	// Features names the features, in the order of every candidate's
	// values: the features table's.
	Features   []string           `json:"features"`
	Candidates []FeatureCandidate `json:"candidates"`
}

// FeatureCandidate is one quotable candidate sentence: its text as an
// answer would quote it, its feature values and its score.
type FeatureCandidate struct {
	Text   string    `json:"text"`
	Values []float64 `json:"values"`
	Score  float64   `json:"score"`
}

// FeatureNames are the names of the features table's rules, in order.
func FeatureNames() []string {
	names := make([]string, len(features))
	for i, f := range features {
		names[i] = f.name
	}
	return names
}

// write logs the quotable candidates of one answer; a nil log writes
// nothing. A failed write is not the answer's failure: it is dropped.
func (l *featureLog) write(question string, cands []candidate, q question) {
	if l == nil {
		return
	}
	line := FeatureLine{Question: question, Features: FeatureNames()}
	for i := range cands {
		c := &cands[i]
		if c.score == unquotableScore {
			continue
		}
		vs := make([]float64, len(features))
		for k, f := range features {
			vs[k] = f.value(c, q)
		}
		line.Candidates = append(line.Candidates, FeatureCandidate{Text: c.text, Values: vs, Score: c.score})
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(append(b, '\n'))
}
