package research_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/projections/answerdocs"
	"github.com/arr-dev/arr/projections/answerdocs/answerdocstest"
)

// TestAtkStoredFilterMissesOnlyMatch: a filtered local question asks the
// read model for "every match" (localGather, n = MaxInt32), which
// Stored caps at 5,000 candidates (maxPool) chosen by ts_rank over the
// whole corpus, and the domain filter is applied afterwards in Go. When
// more than 5,000 passages of other hosts hold the question's terms
// (here 5,100 pages of 127.0.0.1, so every term of the question is
// "common", above MatchCap, and the candidates are the 5,000 passages of
// best ts_rank holding all of them), the one page of the included host
// 127.0.0.2 that answers it is never a candidate: the filtered question
// gets no source although the index holds exactly what it asked for.
func TestAtkStoredFilterMissesOnlyMatch(t *testing.T) {
	x := newIndex(t)
	var docs []answer.DocumentIndexed
	for i := range 5100 {
		docs = append(docs, answerdocstest.Doc(fmt.Sprintf("mirror%04d", i), "Zorblax engine rpm", []string{"Zorblax rpm"},
			"The Zorblax engine rpm is listed on the Zorblax rpm page."))
	}
	only := answerdocstest.Doc("only", "Engine notes", []string{"Notes"},
		"Among many other machines described at length in these field notes, with their fuel, their crews, their maintenance "+
			"schedules and their histories, the Zorblax engine rpm is 4200 when it idles in cold weather.")
	only.URL, only.Origin = "http://127.0.0.2/only", "http://127.0.0.2/only"
	docs = append(docs, only)
	x.Add(t, docs...)

	s := research.NewStored(answerdocs.NewQueries(x.Pool), research.DefaultWeights)
	r, err := research.New(research.Config{Search: s, Fetch: webpage.New(webpage.Config{AllowPrivate: true})})
	if err != nil {
		t.Fatal(err)
	}
	req := ask(t, "Zorblax engine rpm?", "pro", "quick")
	if req.Filters, err = answer.ParseFilters(answer.FilterInput{IncludeDomains: []string{"127.0.0.2"}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	res, err := r.Answer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range res.Sources {
		if strings.Contains(src.URL, "127.0.0.2/only") {
			return
		}
	}
	t.Fatalf("include_domains=127.0.0.2: sources %+v, answer %q; the index holds a 127.0.0.2 page that answers it", res.Sources, res.Answer)
}

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
