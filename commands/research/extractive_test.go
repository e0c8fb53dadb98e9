package research_test

import (
	"context"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain/answer"
)

// docCorpus is a local index held in memory, cut into passages as the
// answer_docs read model cuts documents.
type docCorpus []answer.DocumentIndexed

func (c docCorpus) Generation(context.Context) (uint64, error) { return 1, nil }
func (c docCorpus) Passages(context.Context) ([]answer.IndexedPassage, uint64, error) {
	var out []answer.IndexedPassage
	for _, d := range c {
		for _, p := range answer.Passages(d) {
			out = append(out, answer.IndexedPassage{Passage: p, Title: d.Title, URL: d.URL})
		}
	}
	return out, 1, nil
}

func prose(heading string, paras ...string) answer.Section {
	s := answer.Section{Heading: []string{heading}}
	for _, p := range paras {
		s.Blocks = append(s.Blocks, answer.Block{Kind: answer.Prose, Text: p})
	}
	return s
}

func TestExtractiveAnswers(t *testing.T) {
	c := docCorpus{
		{DocID: "res", Title: "Resource Consumption", URL: "http://127.0.0.1:1/runtime-config-resource.html", Sections: []answer.Section{
			prose("Memory",
				"shared_buffers (integer) Sets the amount of memory the database server uses for shared memory buffers. The default is typically 128 megabytes (128MB), but might be less if your kernel settings will not support it.",
				"work_mem (integer) Sets the base maximum amount of memory to be used by a query operation before writing to temporary disk files. If this value is specified without units, it is taken as kilobytes."),
		}},
		{DocID: "json", Title: "json — JSON encoder and decoder", URL: "http://127.0.0.1:1/library/json.html", Sections: []answer.Section{
			prose("Basic Usage",
				"If indent is a non-negative integer or string, then JSON array elements and object members will be pretty-printed with that indent level. An indent level of 0, negative, or \"\" will only insert newlines. None (the default) selects the most compact representation."),
			{Heading: []string{"Command line"}, Blocks: []answer.Block{
				{Kind: answer.Prose, Text: "The json.tool module provides a simple command line interface to validate and pretty-print JSON objects. It uses an indentation of four spaces. This is also the default when no option is given."},
				{Kind: answer.Code, Text: "$ python -m json.tool < in.json\n{\"a\": 1}"},
			}},
		}},
		{DocID: "tables", Title: "datetime", URL: "http://127.0.0.1:1/library/datetime.html", Sections: []answer.Section{
			{Heading: []string{"strftime() and strptime() Format Codes"}, Blocks: []answer.Block{
				{Kind: answer.Row, Text: "Directive: %Y; Meaning: Year with century as a decimal number.; Example: 0001, 0002, …, 2013, 2014"},
				{Kind: answer.Row, Text: "Directive: %j; Meaning: Day of the year as a zero-padded decimal number.; Example: 001, 002, …, 366"},
			}},
		}},
	}
	r, err := research.New(research.Config{Search: research.NewLocal(c, research.DefaultWeights), Fetch: webpage.New(webpage.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, q   string
		want      []string // all in the answer
		notWant   []string
		source    string // the first source's URL ends with it ("" : no sources)
		synthesis answer.Synthesis
	}{
		{"the default stated after the description", "What is the default value of shared_buffers?", []string{"128 megabytes"}, nil, "runtime-config-resource.html", answer.Extractive},
		{"a pronoun brings its predecessor", "What indentation does the json.tool command line use by default?", []string{"json.tool module provides", "four spaces"}, []string{"python -m"}, "json.html", answer.Extractive},
		{"a fact only in a table", "Which strftime directive gives the day of the year?", []string{"%j"}, nil, "datetime.html", answer.Extractive},
		{"a question the sources do not answer", "What is the boiling point of mercury at sea level?", []string{"do not answer"}, nil, "", answer.Extractive},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.Answer(context.Background(), ask(t, tc.q, "", ""))
			if err != nil {
				t.Fatal(err)
			}
			if res.Synthesis != tc.synthesis || res.Found != (tc.source != "") {
				t.Fatalf("synthesis %s found %v, want %s %v: %q", res.Synthesis, res.Found, tc.synthesis, tc.source != "", res.Answer)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Answer, w) {
					t.Fatalf("answer %q lacks %q", res.Answer, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(res.Answer, w) {
					t.Fatalf("answer %q holds %q", res.Answer, w)
				}
			}
			if tc.source == "" {
				// Not found: one sentence, no marker, the closest sources
				// listed (with their snippets).
				if len(res.Sources) == 0 || len(res.Sources) > 3 || strings.Contains(res.Answer, "[") || len(answer.Sentences(res.Answer)) != 1 {
					t.Fatalf("an unanswerable question: %+v: %q", res.Sources, res.Answer)
				}
				for _, s := range res.Sources {
					if s.Snippet == "" {
						t.Fatalf("a closest source without a snippet: %+v", s)
					}
				}
				return
			}
			checkCited(t, res)
			if !strings.HasSuffix(res.Sources[0].URL, tc.source) {
				t.Fatalf("first source %s, want …%s", res.Sources[0].URL, tc.source)
			}
			if res.Retrieval.Query == "" || len(res.Retrieval.Passages) == 0 || len(res.Retrieval.Chosen) == 0 || res.Retrieval.Generation != 1 {
				t.Fatalf("retrieval not recorded: %+v", res.Retrieval)
			}
		})
	}
}
