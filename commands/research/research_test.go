package research_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/llm"
	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/adapters/websearch"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/commands/research/researchtest"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
)

type standins struct {
	web *researchtest.Web
	sx  *researchtest.SearXNG
	llm *researchtest.LLM
}

func newResearcher(t *testing.T, withModel bool) (*research.Researcher, standins) {
	t.Helper()
	s := standins{web: researchtest.NewWeb(t), llm: researchtest.NewLLM(t)}
	s.sx = researchtest.NewSearXNG(t, s.web)
	sx, err := websearch.NewSearXNG(s.sx.URL, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := research.Config{Search: sx, Fetch: webpage.New(webpage.Config{AllowPrivate: true})}
	if withModel {
		m, err := llm.New(llm.Config{BaseURL: s.llm.BaseURL(), APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Model = m
	}
	r, err := research.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r, s
}

func ask(t *testing.T, q, tier, mode string) answer.Request {
	t.Helper()
	req, err := answer.ParseRequest(q, true, tier, mode)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// checkCited: every [n] resolves to a returned source with an absolute URL,
// and every returned source is cited.
func checkCited(t *testing.T, res research.Result) {
	t.Helper()
	if len(res.Sources) == 0 {
		t.Fatalf("no sources: %+v", res)
	}
	cited := map[int]bool{}
	for _, n := range answer.Markers(res.Answer) {
		if n < 1 || n > len(res.Sources) {
			t.Fatalf("[%d] refers to nothing in %q (%d sources)", n, res.Answer, len(res.Sources))
		}
		cited[n] = true
	}
	for i, s := range res.Sources {
		u, err := url.Parse(s.URL)
		if err != nil || !u.IsAbs() || (u.Host == "" && u.Scheme != "file") {
			t.Fatalf("source %d URL %q is not absolute", i+1, s.URL)
		}
		if !cited[i+1] {
			t.Fatalf("source %d is returned but not cited in %q", i+1, res.Answer)
		}
		if s.Content == "" || s.Title == "" {
			t.Fatalf("source %d lacks title or content: %+v", i+1, s)
		}
		for _, junk := range researchtest.Boilerplate {
			if strings.Contains(s.Content, junk) {
				t.Fatalf("source %d content keeps boilerplate %q", i+1, junk)
			}
		}
	}
}

func TestQuickAnswerFromSearXNGPagesAndModel(t *testing.T) {
	r, s := newResearcher(t, true)
	res, err := r.Answer(context.Background(), ask(t, "What causes spring tides?", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	checkCited(t, res)
	if res.Synthesis != answer.LLM || strings.Contains(res.Answer, "[42]") {
		t.Fatalf("want a checked model answer, got %s %q", res.Synthesis, res.Answer)
	}
	if s.sx.Hits() != 1 || s.llm.Hits() != 1 || s.web.Hits() == 0 {
		t.Fatalf("hits: search %d llm %d web %d", s.sx.Hits(), s.llm.Hits(), s.web.Hits())
	}
	if res.Costs.PagesFetched == 0 || res.Costs.PromptTokens == 0 || res.Costs.CostMicroUSD == 0 {
		t.Fatalf("costs %+v", res.Costs)
	}
}

func TestModelDownIsExtractive(t *testing.T) {
	r, s := newResearcher(t, true)
	s.llm.SetDown(true)
	res, err := r.Answer(context.Background(), ask(t, "What causes spring tides?", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if res.Synthesis != answer.Extractive || len(answer.Markers(res.Answer)) == 0 {
		t.Fatalf("want an extractive answer with markers, got %s %q", res.Synthesis, res.Answer)
	}
	checkCited(t, res)
}

func TestSearchDownIsUnavailable(t *testing.T) {
	r, s := newResearcher(t, true)
	s.sx.SetDown(true)
	_, err := r.Answer(context.Background(), ask(t, "What causes spring tides?", "", ""))
	if !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if s.llm.Hits() != 0 {
		t.Fatal("the model was called without sources")
	}
}

func TestDeepSearchesSeveralTimesAndCitesCorroboratedSources(t *testing.T) {
	r, s := newResearcher(t, true)
	res, err := r.Answer(context.Background(), ask(t, "Why are some tides bigger than others?", "pro", "deep"))
	if err != nil {
		t.Fatal(err)
	}
	checkCited(t, res)
	if s.sx.Hits() < 3 || len(res.SubQuestions) < 2 || res.Costs.Searches != int(s.sx.Hits()) {
		t.Fatalf("searches %d, sub-questions %v", s.sx.Hits(), res.SubQuestions)
	}
	multi := 0
	for _, src := range res.Sources {
		if s.sx.FoundBy(src.URL) > 1 {
			multi++
		}
	}
	if multi == 0 {
		t.Fatalf("no cited source was found by more than one search: %+v", res.Sources)
	}
}

// corpus is a local index held in memory: the passages of documents, as
// the answer_docs read model cuts them.
type corpus struct{ ps []answer.IndexedPassage }

func (c corpus) Generation(context.Context) (uint64, error) { return 1, nil }
func (c corpus) Passages(context.Context) ([]answer.IndexedPassage, uint64, error) {
	return c.ps, 1, nil
}

func TestLocalBackendWithoutStandIns(t *testing.T) {
	var c corpus
	for _, a := range researchtest.Articles {
		var blocks []answer.Block
		for _, p := range a.Paragraphs {
			blocks = append(blocks, answer.Block{Kind: answer.Prose, Text: p})
		}
		d := answer.DocumentIndexed{DocID: answer.DocID("/docs/" + a.Slug + ".md"), Title: a.Title, Sections: []answer.Section{{Blocks: blocks}}}
		for _, p := range answer.Passages(d) {
			c.ps = append(c.ps, answer.IndexedPassage{Passage: p, Title: a.Title})
		}
	}
	r, err := research.New(research.Config{Search: research.NewLocal(c, research.DefaultWeights), Fetch: webpage.New(webpage.Config{}),
		DocsBaseURL: "http://127.0.0.1:8081"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Answer(context.Background(), ask(t, "Why does bread rise?", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	checkCited(t, res)
	if res.Synthesis != answer.Extractive || res.Sources[0].URL != "http://127.0.0.1:8081/docs/"+answer.DocID("/docs/bread.md") || !strings.Contains(res.Answer, "yeast") {
		t.Fatalf("got %+v", res)
	}
	res, err = r.Answer(context.Background(), ask(t, "quantum chromodynamics lattice", "", ""))
	if err != nil || res.Synthesis != answer.NoSources || len(res.Sources) != 0 {
		t.Fatalf("no match: %+v %v", res, err)
	}
}
