package research_test

import (
	"context"
	"testing"

	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/projections/answerdocs"
	"github.com/arr-dev/arr/projections/answerdocs/answerdocstest"
)

// TestAtkStoredUnicodeSpaceSymbolLost: terms.Split's quoted symbols
// exclude only ASCII white space (RE2's \s), so "'\u3000'" (a quoted
// ideographic space, as a CJK style guide names it) is one term, which
// the tsvector holds whole; the stored analysis joins terms with spaces
// and Decode splits them with strings.Fields, which splits at U+3000
// too. The GIN index picks the passage, BM25F (scoring the decoded
// analysis) finds no query term in it, and the search returns nothing:
// the one tokenizer is not the one the scorer reads back.
func TestAtkStoredUnicodeSpaceSymbolLost(t *testing.T) {
	x := newIndex(t)
	x.Add(t, answerdocstest.Doc("cjk", "Style guide", []string{"Spacing"},
		"Between a Latin word and a Han character, never type '\u3000' (the full-width space)."))
	c, err := answerdocs.NewQueries(x.Pool).Candidates(context.Background(), []string{"'\u3000'"}, 10)
	if err != nil || len(c.Passages) != 1 {
		t.Fatalf("candidates %+v, %v: want the one passage", c.Passages, err)
	}
	s := research.NewStored(answerdocs.NewQueries(x.Pool), research.DefaultWeights)
	if got := topDoc(t, s, "'\u3000'"); got != "cjk" {
		t.Fatalf("search of the quoted full-width space: best %q, want cjk (the GIN index holds the term)", got)
	}
}
