package research

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/webpage"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/text"
)

// The golden test pins the extractive writer's output, byte for byte, over
// the answer evaluation's corpus and questions (scripts/eval/): every
// question of scripts/eval/questions.json, with the sources a free and a
// pro answer select from the local index of the pages of
// scripts/eval/pages.txt, with the sources of another question (what the
// sources do not answer), with retrieval's index and without it (term
// weights from the sentences). The inputs are recorded in
// testdata/extractive/inputs.json.gz (the passages, and the corpus's
// passage count and document frequencies, from which the index's IDF is
// rebuilt exactly); the outputs in testdata/extractive/golden.json.
//
//	go test ./commands/research -run TestExtractiveGolden -golden.inputs  # needs python3.11-doc
//	go test ./commands/research -run TestExtractiveGolden -golden.update  # outputs from the current writer
var (
	goldenInputs = flag.Bool("golden.inputs", false, "rebuild testdata/extractive/inputs.json.gz from scripts/eval and /usr/share/doc/python3.11/html")
	goldenUpdate = flag.Bool("golden.update", false, "rewrite testdata/extractive/golden.json from the current extractive writer")
)

const (
	goldenInputsFile = "testdata/extractive/inputs.json.gz"
	goldenOutputFile = "testdata/extractive/golden.json"
	evalDocs         = "/usr/share/doc/python3.11/html"
)

// goldenFixture is the recorded input of every case.
type goldenFixture struct {
	// Passages is the corpus's passage count (the index's N).
	Passages int `json:"passages"`
	// DF is the document frequency of every term of every question.
	DF map[string]int `json:"df"`
	// Table holds every passage a case quotes from, by ID.
	Table map[string]answer.IndexedPassage `json:"table"`
	Cases []goldenCase                     `json:"cases"`
}

// goldenCase is one call of extractive.
type goldenCase struct {
	Name     string         `json:"name"`
	Question string         `json:"question"`
	NoIndex  bool           `json:"no_index,omitempty"`
	Sources  []goldenSource `json:"sources"`
}

type goldenSource struct {
	Title    string    `json:"title"`
	URL      string    `json:"url"`
	DocID    string    `json:"doc_id"`
	Passages []string  `json:"passages"`
	Scores   []float64 `json:"scores"`
}

// goldenOutput is what extractive returned for one case.
type goldenOutput struct {
	Name   string   `json:"name"`
	Answer string   `json:"answer"`
	Chosen []Chosen `json:"chosen"`
}

func TestExtractiveGolden(t *testing.T) {
	if *goldenInputs {
		writeGoldenInputs(t)
	}
	fx := readGoldenInputs(t)
	idx := countedIndex(fx.Passages, fx.DF)
	var got []goldenOutput
	for _, c := range fx.Cases {
		srcs := c.sources(fx.Table)
		x := idx
		if c.NoIndex {
			x = nil
		}
		a, chosen := extractive(c.Question, srcs, x, nil)
		got = append(got, goldenOutput{Name: c.Name, Answer: a, Chosen: chosen})
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *goldenUpdate {
		if err := os.WriteFile(goldenOutputFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenOutputFile)
	if err != nil {
		t.Fatalf("reading the golden outputs (record them with -golden.update): %v", err)
	}
	if string(want) == string(b) {
		return
	}
	var wantOut []goldenOutput
	if err := json.Unmarshal(want, &wantOut); err != nil {
		t.Fatal(err)
	}
	if len(wantOut) != len(got) {
		t.Fatalf("%d outputs, golden has %d", len(got), len(wantOut))
	}
	for i := range got {
		g, w := got[i], wantOut[i]
		if g.Answer != w.Answer || fmt.Sprint(g.Chosen) != fmt.Sprint(w.Chosen) {
			t.Errorf("%s:\n got %q %v\nwant %q %v", g.Name, g.Answer, g.Chosen, w.Answer, w.Chosen)
		}
	}
	t.Fatal("the extractive writer's output moved from testdata/extractive/golden.json")
}

// countedIndex is an index whose IDF is that of a corpus of n passages with
// the document frequencies df.
func countedIndex(n int, df map[string]int) *Index {
	x := &Index{passages: make([]answer.IndexedPassage, n), postings: map[string][]posting{}, n: float64(n)}
	for t, d := range df {
		x.postings[t] = make([]posting, d)
	}
	return x
}

func (c goldenCase) sources(table map[string]answer.IndexedPassage) []numbered {
	out := make([]numbered, len(c.Sources))
	for i, s := range c.Sources {
		out[i] = numbered{title: s.Title, url: s.URL, docID: s.DocID}
		for j, id := range s.Passages {
			out[i].passages = append(out[i].passages, Scored{IndexedPassage: table[id], Score: s.Scores[j]})
		}
	}
	return out
}

func readGoldenInputs(t *testing.T) goldenFixture {
	t.Helper()
	f, err := os.Open(goldenInputsFile)
	if err != nil {
		t.Fatalf("reading the golden inputs (record them with -golden.inputs): %v", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var fx goldenFixture
	if err := json.NewDecoder(z).Decode(&fx); err != nil {
		t.Fatalf("decoding %s: %v", goldenInputsFile, err)
	}
	if len(fx.Cases) == 0 {
		t.Fatalf("%s holds no case", goldenInputsFile)
	}
	return fx
}

// writeGoldenInputs records the inputs from the evaluation's pages and
// questions, as the local index serves them.
func writeGoldenInputs(t *testing.T) {
	t.Helper()
	ps := evalCorpus(t)
	idx := BuildIndex(ps, 1, DefaultWeights)
	qs := evalQuestions(t)
	fx := goldenFixture{Passages: idx.Len(), DF: map[string]int{}, Table: map[string]answer.IndexedPassage{}}
	selected := make([][]numbered, len(qs))
	for i, q := range qs {
		for _, term := range append(Terms(q), Terms(strings.ToLower(q))...) {
			fx.DF[term] = len(idx.postings[term])
		}
		ranked := preferAnswerType(q, idx.Search(q, localPassages))
		selected[i] = selectSources(ranked, 5)
		fx.add(fmt.Sprintf("q%02d free", i+1), q, selected[i], false)
		fx.add(fmt.Sprintf("q%02d pro", i+1), q, selectSources(ranked, 8), false)
		fx.add(fmt.Sprintf("q%02d free, no index", i+1), q, selected[i], true)
	}
	for i, q := range qs {
		// Another question's sources: mostly what does not answer.
		j := (i + 1) % len(qs)
		fx.add(fmt.Sprintf("q%02d with the sources of q%02d", i+1, j+1), q, selected[j], false)
	}
	if err := os.MkdirAll(filepath.Dir(goldenInputsFile), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(goldenInputsFile)
	if err != nil {
		t.Fatal(err)
	}
	z, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err := json.NewEncoder(z).Encode(fx); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func (fx *goldenFixture) add(name, q string, srcs []numbered, noIndex bool) {
	c := goldenCase{Name: name, Question: q, NoIndex: noIndex}
	for _, s := range srcs {
		gs := goldenSource{Title: s.title, URL: s.url, DocID: s.docID}
		for _, p := range s.passages {
			fx.Table[p.ID] = p.IndexedPassage
			gs.Passages = append(gs.Passages, p.ID)
			gs.Scores = append(gs.Scores, p.Score)
		}
		c.Sources = append(c.Sources, gs)
	}
	fx.Cases = append(fx.Cases, c)
}

// evalCorpus is the passages of the evaluation's pages, extracted and
// cleaned as `arr answer index add` indexes them.
func evalCorpus(t *testing.T) []answer.IndexedPassage {
	t.Helper()
	f, err := os.Open("../../scripts/eval/pages.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ps []answer.IndexedPassage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		page := strings.TrimSpace(sc.Text())
		if page == "" || strings.HasPrefix(page, "#") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(evalDocs, page))
		if err != nil {
			t.Fatalf("reading the evaluation's page (apt-get install python3.11-doc): %v", err)
		}
		url := "http://127.0.0.1/" + page
		p, err := webpage.Extract(webpage.Raw{URL: url, ContentType: "text/html", Body: b})
		if err != nil {
			t.Fatalf("extracting %s: %v", page, err)
		}
		d := answer.DocumentIndexed{DocID: answer.DocID(url), URL: url, Title: cleanText(p.Title)}
		for _, s := range Sections(p) {
			cs := answer.Section{Anchor: cleanText(s.Anchor)}
			for _, h := range s.Heading {
				if h = cleanText(h); h != "" {
					cs.Heading = append(cs.Heading, h)
				}
			}
			for _, bl := range s.Blocks {
				if tx := text.Clean(bl.Text); strings.TrimSpace(tx) != "" {
					cs.Blocks = append(cs.Blocks, answer.Block{Kind: bl.Kind, Text: tx})
				}
			}
			if len(cs.Blocks) > 0 {
				d.Sections = append(d.Sections, cs)
			}
		}
		for _, q := range answer.Passages(d) {
			ps = append(ps, answer.IndexedPassage{Passage: q, Title: d.Title, URL: url})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ps
}

func cleanText(s string) string { return strings.Join(strings.Fields(text.Clean(s)), " ") }

func evalQuestions(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../scripts/eval/questions.json")
	if err != nil {
		t.Fatal(err)
	}
	var qs []struct{ Question string }
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Question
	}
	return out
}
