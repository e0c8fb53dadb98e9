package research_test

import (
	"context"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/answer"
)

// TestResolve: without turns the question is unchanged; without a model
// the extractive rule resolves it; with a model (a loopback stand-in) the
// model's rewrite is used, and when the model is down the rule is.
func TestResolve(t *testing.T) {
	ctx := context.Background()
	conv := []answer.Message{{Role: "user", Content: "When does the island ferry leave?"}, {Role: "assistant", Content: "At nine [1]."}}
	plain, _ := newResearcher(t, false)
	if q, by := plain.Resolve(ctx, "How long does it take?", nil); q != "How long does it take?" || by != "unchanged" {
		t.Fatalf("no turns: %q %s", q, by)
	}
	if q, by := plain.Resolve(ctx, "How long does it take?", conv); q != "How long does the island ferry take?" || by != "extractive" {
		t.Fatalf("no model: %q %s", q, by)
	}
	if q, by := plain.Resolve(ctx, "What is a Fresnel lens?", conv); q != "What is a Fresnel lens?" || by != "unchanged" {
		t.Fatalf("self-contained: %q %s", q, by)
	}
	withModel, s := newResearcher(t, true)
	if q, by := withModel.Resolve(ctx, "How long does it take?", conv); q != "How long does the island ferry leave take?" || by != "llm" {
		t.Fatalf("model: %q %s", q, by)
	}
	hits := s.llm.Hits()
	s.llm.SetDown(true)
	if q, by := withModel.Resolve(ctx, "How long does it take?", conv); q != "How long does the island ferry take?" || by != "extractive" || s.llm.Hits() != hits+1 {
		t.Fatalf("model down: %q %s", q, by)
	}
}

// TestSnippetsOfAModelsAnswer: the model's answer's sources carry the
// snippet of the passage text it used.
func TestSnippetsOfAModelsAnswer(t *testing.T) {
	r, _ := newResearcher(t, true)
	res, err := r.Answer(context.Background(), ask(t, "what causes tides", "free", "quick"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Synthesis != answer.LLM || len(res.Sources) == 0 {
		t.Fatalf("%+v", res)
	}
	used := answer.CitedText(res.Answer, len(res.Sources))
	for i, src := range res.Sources {
		if src.Snippet == "" || len([]rune(src.Snippet)) > answer.SnippetChars {
			t.Fatalf("source %d snippet %q", i+1, src.Snippet)
		}
		// The stand-in cites each source's first sentence: the snippet
		// holds it.
		if len(used[i]) == 0 || !strings.Contains(src.Snippet, strings.TrimSuffix(used[i][0], ".")) {
			t.Fatalf("source %d: snippet %q does not hold %q", i+1, src.Snippet, used[i])
		}
	}
}
