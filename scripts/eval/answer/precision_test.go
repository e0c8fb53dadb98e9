package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func compiled(t testing.TB, n *normalizer, q question) question {
	t.Helper()
	if bad := q.compile(n); len(bad) > 0 {
		t.Fatalf("%s: %v", q.ID, bad)
	}
	return q
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// TestAbstention: answer_found false is an abstention; absent is not. An
// answerable question that abstained has no fact, whatever its text says;
// an unanswerable one is marked by its abstention alone.
func TestAbstention(t *testing.T) {
	c := testCorpus(t)
	n := newNormalizer()
	s := newScorer(n, c)
	answerable := testQuestion(t, n, []string{"re:sort_keys is true \\(default: false\\)"})
	unanswerable := compiled(t, n, question{ID: "q02", Kind: "unanswerable", Question: "What port does json serve on?", Absent: []string{"port"}})
	text := "If sort_keys is true (default: False) [1], the output of dictionaries is sorted by key, which helps comparing documents."
	srcs := []source{{URL: c.url("library/json.html")}}
	tests := []struct {
		name            string
		q               question
		found           *bool
		abstained, fact bool
		why             string // a substring of the reasons; empty: none about abstaining
	}{
		{name: "answerable, answered", q: answerable, found: yes(), fact: true},
		{name: "answerable, field absent counts as found", q: answerable, found: nil, fact: true},
		{name: "answerable, abstained: no fact", q: answerable, found: no(), abstained: true, why: "abstained"},
		{name: "unanswerable, abstained", q: unanswerable, found: no(), abstained: true},
		{name: "unanswerable, answered", q: unanswerable, found: yes(), why: "says one was found"},
		{name: "unanswerable, field absent: answered", q: unanswerable, found: nil, why: "says one was found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.score(context.Background(), tt.q, reply{Answer: text, Sources: srcs, AnswerFound: tt.found})
			why := strings.Join(got.Why, "; ")
			if got.Abstained != tt.abstained || got.Fact != tt.fact {
				t.Errorf("abstained %v fact %v, want %v %v; why: %s", got.Abstained, got.Fact, tt.abstained, tt.fact, why)
			}
			if tt.why != "" && !strings.Contains(why, tt.why) {
				t.Errorf("why %q lacks %q", why, tt.why)
			}
			if tt.why == "" && strings.Contains(why, "abstain") {
				t.Errorf("why %q speaks of abstaining", why)
			}
		})
	}
}

// TestWrongSubject: a wrong statement of the question's in the answer is
// the wrong_subject mark, markers and case aside; the fact alone is not.
func TestWrongSubject(t *testing.T) {
	c := testCorpus(t)
	n := newNormalizer()
	s := newScorer(n, c)
	q := testQuestion(t, n, []string{"re:none \\(the default\\)"})
	q.Wrong = []string{"if sort_keys is true (default: false)", "re:skipkeys is true \\(default: false\\)"}
	q = compiled(t, n, q)
	for _, tt := range []struct {
		answer string
		want   bool
	}{
		{"None (the default) selects the most compact representation [1].", false},
		{"None (the default) selects the most compact representation [1]. If sort_keys is true [2] (default: False), output is sorted.", true},
		{"If SKIPKEYS is true (default: False) [1], keys are skipped.", true},
	} {
		got := s.score(context.Background(), q, reply{Answer: tt.answer, Sources: []source{{URL: c.url("library/json.html")}}})
		if got.WrongSubject != tt.want {
			t.Errorf("%q: wrong_subject %v, want %v; why: %s", tt.answer, got.WrongSubject, tt.want, strings.Join(got.Why, "; "))
		}
	}
}

// TestSuspects: the automatic check flags a sentence naming an identifier
// of a kind the question asks about that the question does not name and
// that is not inside the fact's own text.
func TestSuspects(t *testing.T) {
	sj := newSubjects(map[string]bool{"stash": true, "commit": true, "reset": true})
	none := func(string) []string { return nil }
	tests := []struct {
		name, question string
		sentences      []string
		spans          func(string) []string
		want           []string // substrings of the notes, one per note
	}{
		{name: "another dotted name", question: "What is the default value of indent in json.dumps?",
			sentences: []string{"None (the default) selects the most compact representation.", "json.loads() deserializes a str."},
			spans:     none, want: []string{`"json.loads"`}},
		{name: "the question's own name, by its last component", question: "What is the default value of indent in json.dumps?",
			sentences: []string{"With dumps(), indent=None (the default) is compact."}, spans: none},
		{name: "file and host names are not Python names", question: "What does os.remove do?",
			sentences: []string{"See library/os.html on docs.python.org for details."}, spans: none},
		{name: "another git command, both spellings", question: "What does git stash --all stash?",
			sentences: []string{"git stash --all also stashes ignored files.", "Use git-commit(1) to record.", "The git reset command moves HEAD."},
			spans:     none, want: []string{`"git commit"`, `"git reset"`}},
		{name: "git followed by a plain word is no command", question: "What does git stash do?",
			sentences: []string{"It saves the git repository state."}, spans: none},
		{name: "an option not asked about", question: "What does git branch -D do?",
			sentences: []string{"Shortcut for --delete --force.", "-M is a shortcut for --move --force."},
			spans:     func(s string) []string { return []string{"delete --force"} },
			want:      []string{`"-M"`}},
		{name: "a header asked about without a name: the fact's header is fine", question: "Which header carries the records API key?",
			sentences: []string{"Send Authorization: Bearer KEY.", "The operator's key goes in X-Admin-Key."},
			spans:     func(s string) []string { return []string{"authorization: bearer"} }, want: []string{`"x-admin-key"`}},
		{name: "a variable asked about", question: "Which environment variable sets the data directory?",
			sentences: []string{"ARR_DATA_DIR is .arr by default.", "ARR_LOG_LEVEL is info."},
			spans:     func(s string) []string { return []string{"arr_data_dir"} }, want: []string{`"arr_log_level"`}},
		{name: "no kind asked about, nothing flagged", question: "How long are answers cached?",
			sentences: []string{"Answers are cached 6 hours; see ARR_CACHE_TTL and json.dumps()."}, spans: none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sj.suspects(tt.question, tt.sentences, tt.spans)
			if len(got) != len(tt.want) {
				t.Fatalf("suspects %q, want %d like %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("note %q lacks %q", got[i], w)
				}
			}
		})
	}
}

// TestTallyPrecision: fact percentages are of answerable questions;
// abstention precision is of the abstaining replies, recall of the
// unanswerable questions; wrong-subject and suspect count every answer.
func TestTallyPrecision(t *testing.T) {
	var tl tally
	tl.add(result{scores: scores{Fact: true}}, false)
	tl.add(result{scores: scores{Abstained: true}}, false) // an answerable question abstained
	tl.add(result{scores: scores{Abstained: true}}, true)
	tl.add(result{scores: scores{Abstained: true}}, true)
	tl.add(result{scores: scores{WrongSubject: true, Suspect: []string{"x"}}}, true) // answered an unanswerable one, about another subject
	got := tl.String()
	for _, want := range []string{"fact 50%", "wrong-subject 1 suspect 1", "abstain precision 67% recall 67%", "(unanswerable 2/3, answerable 1/2)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	var empty tally
	empty.add(result{scores: scores{Fact: true}}, false)
	if got := empty.String(); !strings.Contains(got, "abstain precision - recall -") {
		t.Errorf("%q: want dashes with no abstention and no unanswerable question", got)
	}
}

// TestQuestionShapes: an unanswerable question has absent patterns and no
// facts; an answerable one has facts and no absent patterns.
func TestQuestionShapes(t *testing.T) {
	n := newNormalizer()
	for _, tt := range []struct {
		q   question
		bad bool
	}{
		{q: question{Kind: "unanswerable", Absent: []string{"port"}}},
		{q: question{Kind: "unanswerable"}, bad: true},
		{q: question{Kind: "unanswerable", Absent: []string{"port"}, Facts: [][]string{{"8000"}}}, bad: true},
		{q: question{Kind: "unanswerable", Absent: []string{"port"}, Wrong: []string{"x"}}, bad: true},
		{q: question{Kind: "default", Facts: [][]string{{"8000"}}, Pages: []string{"a.html"}, Wrong: []string{"re:(bad"}}, bad: true},
		{q: question{Kind: "default", Facts: [][]string{{"8000"}}, Pages: []string{"a.html"}, Absent: []string{"x"}}, bad: true},
		{q: question{Kind: "default", Facts: [][]string{{"8000"}}, Pages: []string{"a.html"}, Wrong: []string{"re:port \\d+"}}},
	} {
		if got := tt.q.compile(n); (len(got) > 0) != tt.bad {
			t.Errorf("%+v: defects %q, want defects %v", tt.q, got, tt.bad)
		}
	}
}

// TestCheckAgainst: -check refuses an absent pattern found on a listed
// page, a wrong statement on none, and one inside the fact's own sentence.
func TestCheckAgainst(t *testing.T) {
	n := newNormalizer()
	pages := []string{"a.html", "b.html"}
	texts := map[string]string{
		"a.html": n.text("If sort_keys is true (default: False), the output is sorted. If skipkeys is true (default: False), keys are skipped."),
		"b.html": n.text("The server listens on port 8000 by default."),
	}
	u := compiled(t, n, question{ID: "q01", Kind: "unanswerable", Absent: []string{"re:json.{0,40}port", "port 8000"}})
	if got := checkAgainst(u, pages, texts); len(got) != 1 || !strings.Contains(got[0], "b.html") {
		t.Errorf("absent: %q, want one defect on b.html", got)
	}
	a := compiled(t, n, question{ID: "q02", Kind: "default", Facts: [][]string{{"sort_keys is true (default: false)"}}, Pages: []string{"a.html"},
		Wrong: []string{"skipkeys is true (default: false)", "re:ensure_ascii"}})
	if got := checkAgainst(a, pages, texts); len(got) != 1 || !strings.Contains(got[0], "ensure_ascii") {
		t.Errorf("wrong: %q, want one defect for ensure_ascii", got)
	}
	if got := wrongInFactSentence(a, texts); len(got) != 0 {
		t.Errorf("a neighbour's own sentence: %q, want none", got)
	}
	same := compiled(t, n, question{ID: "q03", Kind: "default", Facts: [][]string{{"sort_keys is true"}}, Pages: []string{"a.html"},
		Wrong: []string{"(default: false), the output"}})
	if got := wrongInFactSentence(same, texts); len(got) != 1 {
		t.Errorf("the fact's own sentence: %q, want one defect", got)
	}
}

// TestSeededCitations: a citation of the answer service's /docs/{doc_id}
// of a seeded reference document is a citation of its page, and its text
// is read as Markdown.
func TestSeededCitations(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "answers.md"), []byte("# Answers\n\nAnswers are cached **6 hours** (see [the cache](cache.md), `ARR_X`).\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := serveCorpus(dir, newNormalizer())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	if err := c.seedDocs("http://127.0.0.1:8081", []string{"answers.md"}); err != nil {
		t.Fatal(err)
	}
	// docseed names the document "docs/answers.md"; DocID is the hex of
	// the first 12 bytes of its SHA-256.
	u := "http://127.0.0.1:8081/docs/" + docID(t, "docs/answers.md")
	if p, ok := c.pagePath(u + "#section"); !ok || p != "answers.md" {
		t.Errorf("pagePath(%s) = %q, %v; want answers.md", u, p, ok)
	}
	if _, ok := c.pagePath("http://127.0.0.1:9999/docs/" + docID(t, "docs/answers.md")); ok {
		t.Error("a /docs/ path on another host is not the seeded document")
	}
	text, err := c.text(context.Background(), "answers.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "answers are cached 6 hours (see the cache, arr_x)."; !strings.Contains(text, want) {
		t.Errorf("text %q lacks %q", text, want)
	}
}

func docID(t testing.TB, origin string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(origin))
	return hex.EncodeToString(sum[:12])
}
