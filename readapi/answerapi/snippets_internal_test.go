package answerapi

import (
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/answer"
)

// TestWithSnippetsOfAnEarlierAnswer: an answer recorded before snippets
// (AnswerSynthesized version 2, served from the cache) gets each source's
// snippet cut from its content; a recorded snippet is kept; the sources
// given are not changed.
func TestWithSnippetsOfAnEarlierAnswer(t *testing.T) {
	srcs := []answer.Source{
		{Title: "Ferry", URL: "http://127.0.0.1/ferry", Content: "Bicycles travel free. The crossing takes forty minutes in calm weather."},
		{Title: "Tour", URL: "http://127.0.0.1/tour", Content: "c", Snippet: "The tour takes ninety minutes."},
	}
	got := withSnippets("The crossing takes forty minutes [1]. The tour is long [2].", srcs)
	if !strings.Contains(got[0].Snippet, "The crossing takes forty minutes in calm weather.") || got[1].Snippet != "The tour takes ninety minutes." {
		t.Fatalf("%+v", got)
	}
	if srcs[0].Snippet != "" {
		t.Fatal("the cached sources were changed")
	}
	if out := withSnippets("No sources matched.", nil); out == nil || len(out) != 0 {
		t.Fatalf("%#v", out)
	}
}
