package research

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The feature log holds, for an answer, every quotable candidate with one
// value per feature of the table, in its order, and the score those
// values and the table's weights make.
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
		for i, f := range features {
			sum += f.weight * c.Values[i]
		}
		if len(c.Values) != len(features) || c.Score != sum {
			t.Fatalf("candidate %q: values %v, score %v, want the weighted sum %v", c.Text, c.Values, c.Score, sum)
		}
	}
	// A nil log writes nothing and answers the same.
	again, _ := extractive("What is the default value of gc.auto?", srcs, nil, nil)
	if again != text {
		t.Fatalf("answer without a log %q, with one %q", again, text)
	}
}
