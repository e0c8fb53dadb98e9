package research

// Unit tests of the extractive writer's stages. They are internal tests:
// the stages are the package's own functions, not its API.

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/answer"
)

func TestAnalyseQuestion(t *testing.T) {
	tests := []struct {
		name, q     string
		kind        qtype
		key         []string
		names       []string
		sides       [][]string
		asksDefault bool
	}{
		{"a default names its setting", "What is the default value of shared_buffers?", qValue,
			[]string{"shared_buffers", "share", "buffer"}, []string{"shared_buffers"}, nil, true},
		{"a definition asks about its subject only", "What is a decorator in Python?", qDefine,
			[]string{"decor"}, []string{"decorator"}, nil, false},
		{"a comparison has two sides and no word of comparing", "What is the difference between a shallow copy and a deep copy?", qDiff,
			[]string{"shallow", "copi", "deep"}, nil, [][]string{{"shallow", "copi"}, {"deep", "copi"}}, false},
		{"an instruction", "How do I create a virtual environment?", qHowTo,
			[]string{"creat", "virtual", "environ"}, nil, nil, false},
		{"an error names the API", "Which exception does int() raise for a bad string?", qError,
			[]string{"except", "int", "rais", "bad", "string"}, []string{"int"}, nil, false},
		{"stop words only: nothing to look for", "the and of it?", qOther, nil, nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := analyseQuestion(tc.q)
			if q.text != tc.q || q.kind != tc.kind || q.asksDefault != tc.asksDefault {
				t.Fatalf("text %q kind %d default %v, want %q %d %v", q.text, q.kind, q.asksDefault, tc.q, tc.kind, tc.asksDefault)
			}
			if len(q.key) != len(tc.key) || (len(tc.key) > 0 && !reflect.DeepEqual(q.key, tc.key)) {
				t.Fatalf("key %q, want %q", q.key, tc.key)
			}
			if len(q.names) != len(tc.names) || (len(tc.names) > 0 && !reflect.DeepEqual(q.names, tc.names)) {
				t.Fatalf("names %q, want %q", q.names, tc.names)
			}
			if !reflect.DeepEqual(q.sides, tc.sides) {
				t.Fatalf("sides %q, want %q", q.sides, tc.sides)
			}
		})
	}
}

// source is one numbered source of passages given as (kinds, lines).
func source(title string, passages ...[2]string) numbered {
	n := numbered{title: title, url: "http://127.0.0.1:1/" + title, docID: title}
	for i, p := range passages {
		ip := answer.IndexedPassage{Title: title, Passage: answer.Passage{
			ID: title + ":" + string(rune('0'+i)), DocID: title, Seq: i, Heading: []string{"Usage"}, Kinds: p[0], Text: p[1]}}
		n.passages = append(n.passages, Scored{IndexedPassage: ip, Score: 1})
	}
	return n
}

func TestCandidateSentences(t *testing.T) {
	type want struct{ text, own string }
	tests := []struct {
		name, q string
		srcs    []numbered
		want    []want
	}{
		{"a pronoun brings the sentence before", "What indentation does json.tool use?",
			[]numbered{source("json", [2]string{"p", "The json.tool module validates JSON objects. It uses four spaces."})},
			[]want{{"The json.tool module validates JSON objects.", "The json.tool module validates JSON objects."},
				{"The json.tool module validates JSON objects. It uses four spaces.", "It uses four spaces."}}},
		{"a description's first sentence carries its term", "What does shutil.copy2() do?",
			[]numbered{source("shutil", [2]string{"tp", "shutil.copy2(src, dst)\nIdentical to copy() except that it keeps metadata."})},
			[]want{{"shutil.copy2(): Identical to copy() except that it keeps metadata.", "shutil.copy2(): Identical to copy() except that it keeps metadata."}}},
		{"a command completes the sentence that introduces it", "How do I create a virtual environment?",
			[]numbered{source("venv", [2]string{"pc", "Run the venv module with the directory path:\npython3 -m venv tutorial-env"})},
			[]want{{"Run the venv module with the directory path: python3 -m venv tutorial-env.", "Run the venv module with the directory path: python3 -m venv tutorial-env."}}},
		{"a default brings what has it", "What is the default indent?",
			[]numbered{source("json", [2]string{"p", "If indent is a non-negative integer, arrays are pretty-printed. None (the default) selects the most compact representation."})},
			[]want{{"If indent is a non-negative integer, arrays are pretty-printed.", "If indent is a non-negative integer, arrays are pretty-printed."},
				{"If indent is a non-negative integer, arrays are pretty-printed. None (the default) selects the most compact representation.", "None (the default) selects the most compact representation."}}},
		{"no pronoun reaches into another passage", "What does it use?",
			[]numbered{source("a", [2]string{"p", "The module reads files."}, [2]string{"p", "It uses four spaces."})},
			[]want{{"The module reads files.", "The module reads files."}, {"It uses four spaces.", "It uses four spaces."}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cands := candidateSentences(tc.srcs, analyseQuestion(tc.q))
			if len(cands) != len(tc.want) {
				t.Fatalf("%d candidates, want %d: %+v", len(cands), len(tc.want), cands)
			}
			for i, w := range tc.want {
				c := cands[i]
				if c.text != w.text || c.own != w.own {
					t.Fatalf("candidate %d: text %q own %q, want %q %q", i, c.text, c.own, w.text, w.own)
				}
				for _, term := range Terms(c.text) {
					if !c.terms[term] {
						t.Fatalf("candidate %d lacks its term %q", i, term)
					}
				}
			}
		})
	}
}

// Every sentence of a term's description has the term as its context, and
// is its entry's: the default stated in a setting's third sentence is the
// setting's; none of it carries over to the next term.
func TestCandidateSentencesTermContext(t *testing.T) {
	q := analyseQuestion("What is the default value of gc.auto?")
	cands := candidateSentences([]numbered{source("git-gc", [2]string{"tpptp",
		"gc.auto\nWhen there are more loose objects than this, git gc --auto packs them.\nThe default value is 6700.\ngc.autoPackLimit\nThe default value is 50."})}, q)
	if len(cands) != 3 {
		t.Fatalf("%d candidates, want 3: %+v", len(cands), cands)
	}
	for i, want := range []bool{true, true, false} {
		c := cands[i]
		if c.named != want || c.context["gc.auto"] != want {
			t.Fatalf("candidate %d (%q): named %v, context holds gc.auto %v; want %v", i, c.text, c.named, c.context["gc.auto"], want)
		}
	}
	if !cands[2].context["gc.autopacklimit"] {
		t.Fatalf("the second term's sentence lacks its term: %v", cands[2].context)
	}
}

func TestNamesTerm(t *testing.T) {
	for _, tc := range []struct {
		term  string
		names []string
		want  bool
	}{
		{"gc.auto", []string{"gc.auto"}, true},
		{"gc.autoPackLimit", []string{"gc.auto"}, false},
		{"get()", []string{"dict.get"}, true},
		{"json.dumps()", []string{"dumps"}, true},
		{"json.dump()", []string{"json.dumps"}, false},
		{"", []string{"json.dumps"}, false},
		{"decorator", nil, false},
	} {
		if got := namesTerm(tc.term, tc.names); got != tc.want {
			t.Errorf("namesTerm(%q, %q) = %v, want %v", tc.term, tc.names, got, tc.want)
		}
	}
}

func TestAnalyseQuestionDropsDottedTerms(t *testing.T) {
	q := analyseQuestion("What is the default value of gc.auto?")
	if !reflect.DeepEqual(q.key, []string{"gc", "auto"}) {
		t.Fatalf("key %q, want the dotted name's parts", q.key)
	}
}

func TestCandidateSentencesPlaces(t *testing.T) {
	srcs := []numbered{
		source("a", [2]string{"pp", "First sentence here. Second sentence here.\nThird sentence here."}),
		source("b", [2]string{"tp", "exception ValueError\nRaised when a value is wrong."}),
	}
	cands := candidateSentences(srcs, analyseQuestion("Which exception is raised for a wrong value?"))
	type place struct {
		src, index, rank int
		passage          string
	}
	want := []place{{0, 0, 0, "a:0"}, {0, 1, 0, "a:0"}, {0, 2, 0, "a:0"}, {1, 0, 1, "b:0"}}
	if len(cands) != len(want) {
		t.Fatalf("%d candidates, want %d", len(cands), len(want))
	}
	for i, w := range want {
		if got := (place{cands[i].src, cands[i].index, cands[i].rank, cands[i].passage}); got != w {
			t.Fatalf("candidate %d at %+v, want %+v", i, got, w)
		}
	}
	// A term line is context, and the title and heading are too.
	for _, term := range []string{"valueerror", "usag"} {
		if !cands[3].context[term] {
			t.Fatalf("context %v lacks %q", cands[3].context, term)
		}
	}
}

func TestFeaturesTable(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range features {
		if f.name == "" || seen[f.name] || f.weight == 0 || f.value == nil {
			t.Fatalf("feature %q: every feature needs a unique name, a weight and a value", f.name)
		}
		seen[f.name] = true
	}
	q := analyseQuestion("What is the default value of shared_buffers?")
	tests := []struct {
		name string
		c    candidate
		on   []string // features with a value
	}{
		{"a short sentence", candidate{text: "It is 128 MB.", cov: 1}, []string{"coverage", "answer type cue", "short"}},
		{"a long sentence from the third passage", candidate{text: strings.Repeat("word ", 100), rank: 2, cov: 0.5}, []string{"coverage", "passage rank", "long"}},
		{"a version note from a named entry", candidate{text: "Changed in version 3.2: the default is now 128 megabytes.", named: true},
			[]string{"answer type cue", "named entry", "change note"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sum := 0.0
			var on []string
			for _, f := range features {
				if v := f.value(&tc.c, q); v != 0 {
					on = append(on, f.name)
					sum += f.weight * v
				}
			}
			if !reflect.DeepEqual(on, tc.on) {
				t.Fatalf("features %q, want %q", on, tc.on)
			}
			if s := score(&tc.c, q); s != sum {
				t.Fatalf("score %v, want the weighted sum %v", s, sum)
			}
		})
	}
}

func TestScoreCandidates(t *testing.T) {
	q := analyseQuestion("What is the default value of shared_buffers?")
	cands := []candidate{
		{text: "shared_buffers (integer) Sets the amount of memory used for shared memory buffers.", passage: "p"},
		{text: "The default is typically 128 megabytes (128MB), but might be less.", passage: "p"},
		{text: "$ psql -c 'SHOW shared_buffers;'", passage: "p"},
		{text: "Buffers are kept in memory for a while.", passage: "q", context: set(Terms("shared_buffers"))},
	}
	for i := range cands {
		cands[i].terms = set(Terms(cands[i].text))
	}
	weight := termWeights(q.key, cands, nil)
	scoreCandidates(cands, q, weight)
	if cands[2].score != unquotableScore || cands[2].cov != 0 {
		t.Fatalf("code scored %v (coverage %v), want %v", cands[2].score, cands[2].cov, unquotableScore)
	}
	if cands[0].cov != 1 {
		t.Fatalf("a sentence with every key term covers %v", cands[0].cov)
	}
	// The default's sentence holds no key term: its neighbour's count half.
	if cands[1].cov != neighbourWeight {
		t.Fatalf("coverage by a neighbour %v, want %v", cands[1].cov, neighbourWeight)
	}
	// "buffer" in the sentence, the other terms in its heading.
	total := weight["shared_buffers"] + weight["share"] + weight["buffer"]
	want := (weight["buffer"] + contextWeight*(weight["shared_buffers"]+weight["share"])) / total
	if math.Abs(cands[3].cov-want) > 1e-12 {
		t.Fatalf("coverage by context %v, want %v", cands[3].cov, want)
	}
	if cands[1].score <= cands[0].score {
		t.Fatalf("the sentence that states the default scores %v, under the description's %v", cands[1].score, cands[0].score)
	}
}

func TestTermWeights(t *testing.T) {
	cands := []candidate{{terms: set([]string{"memori", "buffer"})}, {terms: set([]string{"memori"})}, {terms: set([]string{"disk"})}}
	key := []string{"memori", "buffer", "absent"}
	w := termWeights(key, cands, nil)
	for term, df := range map[string]float64{"memori": 2, "buffer": 1, "absent": 0} {
		if want := math.Log(1 + 4/(df+1)); w[term] != want {
			t.Fatalf("weight of %q among the candidates %v, want %v", term, w[term], want)
		}
	}
	idx := BuildIndex([]answer.IndexedPassage{
		{Passage: answer.Passage{ID: "1", Text: "memory buffer"}},
		{Passage: answer.Passage{ID: "2", Text: "memory"}},
	}, 0, DefaultWeights)
	w = termWeights(key, cands, idx)
	for _, term := range key {
		if w[term] != idx.IDF(term) {
			t.Fatalf("weight of %q with an index %v, want its IDF %v", term, w[term], idx.IDF(term))
		}
	}
	if w["buffer"] <= w["memori"] {
		t.Fatalf("the rarer term weighs %v, the commoner %v", w["buffer"], w["memori"])
	}
}

// scored is a candidate ready for selection.
func scored(text string, score, cov float64) candidate {
	return candidate{text: text, own: text, score: score, cov: cov, terms: set(Terms(text)), passage: "p"}
}

func TestSelectSentences(t *testing.T) {
	q := analyseQuestion("What is the default value of shared_buffers?")
	tests := []struct {
		name  string
		cands []candidate
		want  []int
	}{
		{"nothing scores enough", []candidate{scored("Shared buffers hold pages in memory.", minScore-0.01, 1)}, nil},
		{"the best covers too little", []candidate{scored("Shared buffers hold pages in memory.", 2, minCoverage-0.01)}, nil},
		{"the best, then the unlike before the near repeat", []candidate{
			scored("Pages are kept in shared memory buffers.", 0.9, 0.6),
			scored("The default is 128 megabytes of shared buffers.", 1.2, 1),
			scored("The default is 128 megabytes of shared buffers, typically.", 1.1, 1),
			scored("A larger value can help a busy server with many clients.", 1.0, 0.6),
		}, []int{1, 3, 0, 2}},
		{"a sentence within a chosen one is not chosen again", []candidate{
			scored("The default of shared buffers is 128 megabytes. It might be less.", 1.2, 1),
			scored("It might be less.", 1.1, 1),
		}, []int{0}},
		{"the best does not name the setting asked about", []candidate{
			scored("The default is 128 megabytes. It might be less.", 1.2, 1),
		}, nil},
		{"only those near the best, and covering enough", []candidate{
			scored("The default is 128 megabytes of shared buffers.", 1, 1),
			scored("A larger value can help a busy server.", 0.62, 1),
			scored("Kernel settings may not support it at all.", 0.59, 1),
			scored("Huge pages are another matter entirely.", 0.9, minCoverage/2-0.01),
		}, []int{0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := selectSentences(tc.cands, q); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("chose %v, want %v", got, tc.want)
			}
		})
	}
	var many []candidate
	for i := 0; i < 2*maxSentences; i++ {
		many = append(many, scored(strings.Repeat(string(rune('a'+i)), 5)+" shared buffers hold pages.", 1, 1))
	}
	if got := selectSentences(many, q); len(got) != maxSentences {
		t.Fatalf("chose %d sentences, at most %d", len(got), maxSentences)
	}
}

func TestSelectSentencesSides(t *testing.T) {
	q := analyseQuestion("What is the difference between a shallow copy and a deep copy?")
	cands := []candidate{
		scored("A shallow copy constructs a new compound object and inserts references.", 1.2, 1),
		scored("A shallow copy inserts references into the new compound object.", 1.1, 1),
		scored("A deep copy constructs a new compound object and inserts copies.", 1.0, 1),
	}
	// The other side comes before a second sentence on the same side.
	if got := selectSentences(cands, q); !reflect.DeepEqual(got[:2], []int{0, 2}) {
		t.Fatalf("chose %v, want the deep copy second", got)
	}
}

func TestTidyAnswer(t *testing.T) {
	tests := []struct {
		name   string
		cands  []candidate
		want   string
		chosen []Chosen
	}{
		{"each sentence cited before its mark", []candidate{
			{text: "The default is 128MB.", src: 0, passage: "a:1", index: 3},
			{text: "Is it less on small kernels?", src: 2, passage: "c:0", index: 0},
		}, "The default is 128MB [1]. Is it less on small kernels [3]?",
			[]Chosen{{"a:1", 3, 1}, {"c:0", 0, 3}}},
		{"a predecessor quoted already is not repeated", []candidate{
			{text: "The module reads files.", passage: "a:0"},
			{text: "The module reads files. It uses four spaces.", passage: "a:0", index: 1},
		}, "The module reads files [1]. It uses four spaces [1].",
			[]Chosen{{"a:0", 0, 1}, {"a:0", 1, 1}}},
		{"a sentence quoted already is left out", []candidate{
			{text: "The module reads files.", passage: "a:0"},
			{text: "the module reads files.", passage: "b:0", src: 1},
		}, "The module reads files [1].", []Chosen{{"a:0", 0, 1}}},
		{"an introducing colon is dropped, a missing mark added", []candidate{
			{text: "Run the module with the path:", passage: "a:0"},
			{text: "It reads files", passage: "a:0", index: 1},
		}, "Run the module with the path [1]. It reads files [1].",
			[]Chosen{{"a:0", 0, 1}, {"a:0", 1, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx := make([]int, len(tc.cands))
			for i := range idx {
				idx[i] = i
			}
			got, chosen := tidyAnswer(tc.cands, idx)
			if got != tc.want || !reflect.DeepEqual(chosen, tc.chosen) {
				t.Fatalf("got %q %v, want %q %v", got, chosen, tc.want, tc.chosen)
			}
		})
	}
}
