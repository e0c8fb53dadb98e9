package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/arr-dev/arr/commands/research"
)

// featuresFile is the file, in the work directory, arr's extractive writer
// logs its candidates to (ARR_ANSWER_FEATURES_FILE).
const featuresFile = "features.jsonl"

// Labelled is one question's line in a features file: the candidate
// sentences of its answer with their feature values, each labelled by
// whether it states the question's fact. scripts/eval/fit reads it.
type Labelled struct {
	ID       string   `json:"id"`
	Split    string   `json:"split"`
	Question string   `json:"question"`
	Features []string `json:"features"`
	// Candidates in arr's order, with the score arr gave them.
	Candidates []LabelledCandidate `json:"candidates"`
}

// LabelledCandidate is one candidate sentence.
type LabelledCandidate struct {
	Text   string    `json:"text"`
	Values []float64 `json:"values"`
	Score  float64   `json:"score"`
	Fact   bool      `json:"fact"`
}

// labelFeatures reads the candidates arr logged (src), labels those of
// the asked questions (by the question's text; the warm-up's are left
// out) and writes them to dst.
func labelFeatures(src, dst string, asked []question, norm *normalizer) error {
	byText := map[string]question{}
	for _, q := range asked {
		byText[q.Question] = q
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("reading arr's feature log: %w", err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("creating the features file: %w", err)
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var line research.FeatureLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			out.Close()
			return fmt.Errorf("arr's feature log: %w", err)
		}
		q, ok := byText[line.Question]
		if !ok {
			continue
		}
		l := Labelled{ID: q.ID, Split: q.Split, Question: q.Question, Features: line.Features}
		for _, c := range line.Candidates {
			l.Candidates = append(l.Candidates, LabelledCandidate{Text: c.Text, Values: c.Values, Score: c.Score,
				Fact: q.matches(norm.text(c.Text)) >= 0})
		}
		if err := enc.Encode(l); err != nil {
			out.Close()
			return fmt.Errorf("writing the features file: %w", err)
		}
	}
	if err := sc.Err(); err != nil {
		out.Close()
		return fmt.Errorf("arr's feature log: %w", err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("writing the features file: %w", err)
	}
	return nil
}
