package main

// The tests sit in package main: a command's functions cannot be imported
// by an external _test package.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testCorpus(t testing.TB) *corpus {
	t.Helper()
	dir := t.TempDir()
	pages := map[string]string{
		"index.html":         `<html><body><p>index</p></body></html>`,
		"library/json.html":  `<html><head><style>p{}</style></head><body><p>If <em>sort_keys</em> is true (default: <code>False</code>), the output is sorted.</p><script>var x</script></body></html>`,
		"library/other.html": `<html><body><p>Nothing about sorting here.</p></body></html>`,
	}
	for p, body := range pages {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := serveCorpus(dir, newNormalizer())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	return c
}

func testQuestion(t testing.TB, n *normalizer, facts ...[]string) question {
	t.Helper()
	q := question{ID: "q01", Pages: []string{"library/json.html"}, Facts: facts}
	for _, alt := range facts {
		var ms []matcher
		for _, s := range alt {
			m, err := n.matcher(s)
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
		}
		q.alts = append(q.alts, ms)
	}
	return q
}

func TestScore(t *testing.T) {
	c := testCorpus(t)
	n := newNormalizer()
	s := newScorer(n, c)
	q := testQuestion(t, n, []string{"re:sort_keys is true \\(default: false\\)"})
	long := " The output of dictionaries is then sorted by key, which helps when comparing serialized documents."
	src := func(p string) source { return source{Title: p, URL: c.url(p), Content: "text"} }
	tests := []struct {
		name                            string
		answer                          string
		sources                         []source
		fact, cited, grounded, readable bool
		later                           bool // the fact is not in the first statement
	}{
		{name: "all good", answer: "If sort_keys is true (default: False) [1], the output is sorted." + long,
			sources: []source{src("library/json.html")}, fact: true, cited: true, grounded: true, readable: true},
		{name: "markers and white space do not break the fact", answer: "If sort_keys is true [1]\n (default:   False), it sorts." + long,
			sources: []source{src("library/json.html")}, fact: true, cited: true, grounded: true, readable: true},
		{name: "cites a page that does not say it", answer: "If sort_keys is true (default: False) [1]." + long,
			sources: []source{src("library/other.html")}, fact: true, readable: true},
		{name: "a marker without a source", answer: "If sort_keys is true (default: False) [2]." + long,
			sources: []source{src("library/json.html")}, fact: true, readable: true},
		{name: "no fact", answer: "The json module encodes and decodes JSON documents [1]." + long,
			sources: []source{src("library/json.html")}, cited: true, readable: true},
		{name: "a fragment is ignored in the page comparison", answer: "If sort_keys is true (default: False) [1]." + long,
			sources: []source{{URL: c.url("library/json.html") + "#json.dumps"}}, fact: true, cited: true, grounded: true, readable: true},
		{name: "too short", answer: "If sort_keys is true (default: False) [1].",
			sources: []source{src("library/json.html")}, fact: true, cited: true, grounded: true},
		{name: "the fact after another statement", answer: "The json module encodes JSON [1]. If sort_keys is true (default: False), it sorts [1]." + long,
			sources: []source{src("library/json.html")}, fact: true, cited: true, grounded: true, readable: true, later: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.score(context.Background(), q, reply{Answer: tt.answer, Sources: tt.sources})
			if got.Fact != tt.fact || got.Cited != tt.cited || got.Grounded != tt.grounded || got.Readable != tt.readable {
				t.Errorf("fact %v cited %v grounded %v readable %v, want %v %v %v %v; why: %s", got.Fact, got.Cited, got.Grounded,
					got.Readable, tt.fact, tt.cited, tt.grounded, tt.readable, strings.Join(got.Why, "; "))
			}
			if want := tt.fact && !tt.later; got.Lead != want {
				t.Errorf("lead %v, want %v", got.Lead, want)
			}
		})
	}
}

func TestReadability(t *testing.T) {
	s := newScorer(newNormalizer(), nil)
	prose := "The default level is WARNING, which means that only events of this level and above will be tracked [1]. "
	tests := []struct {
		name   string
		answer string
		want   string // a substring of the first problem; empty: readable
	}{
		{name: "plain prose", answer: prose + "Comparisons such as x < y and y > z are fine, and so is heap[0] [2]."},
		{name: "too long", answer: strings.Repeat("Word after word makes a very long answer. ", 40), want: "characters"},
		{name: "HTML tag", answer: prose + "<p>Next</p>", want: "HTML tag"},
		{name: "entity", answer: prose + "Use &amp; to join.", want: "HTML entity"},
		{name: "navigation", answer: prose + "Previous topic Logging Cookbook Next topic", want: "navigation"},
		{name: "index modules", answer: prose + "index modules | next | previous", want: "navigation"},
		{name: "permalink", answer: prose + "json.dumps(obj)¶ Serialize obj.", want: "¶"},
		{name: "prompt mid-text", answer: prose + "For example: >>> import json", want: "code"},
		{name: "shell line", answer: prose + "\n$ python -m venv env", want: "code line"},
		{name: "indented", answer: prose + "\n    x = 1", want: "indented"},
		{name: "unbalanced", answer: prose + "The mapping {'a': 1 is shown.", want: "unbalanced"},
		{name: "json", answer: prose + `It returns {"a": 1} as shown.`, want: "JSON"},
		{name: "def", answer: prose + "Write def f(x): return x to define it.", want: "code"},
		{name: "import after a sentence", answer: prose + "Run it. import argparse import os", want: "code"},
		{name: "assignment", answer: prose + "then parser = argparse.ArgumentParser() builds it", want: "code"},
		{name: "repeated sentence", answer: prose + prose, want: "repeated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.readability(tt.answer)
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("problems %q, want none", got)
			case tt.want != "" && (len(got) == 0 || !strings.Contains(strings.Join(got, "; "), tt.want)):
				t.Errorf("problems %q, want one with %q", got, tt.want)
			}
		})
	}
}

func TestHeldoutSplit(t *testing.T) {
	tests := []struct {
		id, want string
		err      bool
	}{
		{id: "q01", want: "tune"}, {id: "q02", want: "tune"}, {id: "q03", want: "heldout"}, {id: "q66", want: "heldout"},
		{id: "x1", err: true}, {id: "q0", err: true},
	}
	for _, tt := range tests {
		got, err := heldoutSplit(tt.id, 3)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("heldoutSplit(%q) = %q, %v; want %q (error %v)", tt.id, got, err, tt.want, tt.err)
		}
	}
}

// TestHeldoutSplitHalf: the Git manual's rule holds out every even id.
func TestHeldoutSplitHalf(t *testing.T) {
	for id, want := range map[string]string{"q01": "tune", "q02": "heldout", "q23": "tune", "q24": "heldout"} {
		if got, err := heldoutSplit(id, 2); err != nil || got != want {
			t.Errorf("heldoutSplit(%q, 2) = %q, %v; want %q", id, got, err, want)
		}
	}
}

func TestGroundedByAnyStatedAlternative(t *testing.T) {
	c := testCorpus(t)
	n := newNormalizer()
	s := newScorer(n, c)
	// The answer states both alternatives; only the second is on the page.
	q := testQuestion(t, n, []string{"sorted by default"}, []string{"sort_keys", "re:default:\\s*false"})
	answer := "The output is sorted by default only when sort_keys is true (default: False) [1], which keeps output stable for diffs and tests."
	got := s.score(context.Background(), q, reply{Answer: answer, Sources: []source{{URL: c.url("library/json.html")}}})
	if !got.Fact || !got.Grounded {
		t.Errorf("fact %v grounded %v, want both; why: %s", got.Fact, got.Grounded, strings.Join(got.Why, "; "))
	}
}

func TestStatements(t *testing.T) {
	s := newScorer(newNormalizer(), nil)
	for _, tc := range []struct {
		answer, first string
		n             int
	}{
		{"The default is 4 [1]. It was 3 before [2].", "The default is 4 [1].", 2},
		{"The default is 4 [1][2]. It was 3 [2].", "The default is 4 [1][2].", 2},
		{"The default is 4 [1] [2]. It was 3 [2]. Older ones used 2 [3].", "The default is 4 [1] [2].", 3},
		{"If sort_keys is true [1]\n (default: False), it sorts. Then [2].", "If sort_keys is true [1]\n (default: False), it sorts.", 2},
		{"The sources do not answer this question.", "The sources do not answer this question.", 0},
	} {
		first, n := s.statements(tc.answer)
		if first != tc.first || n != tc.n {
			t.Errorf("statements(%q) = %q, %d; want %q, %d", tc.answer, first, n, tc.first, tc.n)
		}
	}
}
