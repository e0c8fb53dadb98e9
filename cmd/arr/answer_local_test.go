package main_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands/research/researchtest"
)

// TestAnswerLocalIndex: the default backend with no stand-ins at all. The
// first arr up seeds the index with arr's own OpenAPI documents and
// reference pages; `arr answer index add DIR` adds files while the server
// runs; with no model reachable (the gateway has no key configured)
// answers are extractive with valid citations.
func TestAnswerLocalIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the arr binary against PostgreSQL")
	}
	e := newEnv(t)
	// Info level: the seeder logs when it has indexed every document, and
	// the question is asked only then (after a count of some of them, the
	// answer depended on how far seeding had got).
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_LLM_BASE_URL=http://127.0.0.1:1/v1", "ARR_ANSWER_SEED=on", "ARR_LOG_LEVEL=info")
	p := e.up()
	e.createAccount("local@example.com", "free")
	key := e.mint("local@example.com", "answer").Secret

	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(p.logs.String(), "seeded the local search index with arr's documentation") {
		if time.Now().After(deadline) {
			t.Fatalf("the index was not seeded within 60s; logs:\n%s", p.logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	out, _, code := e.arr("answer", "index", "count")
	if n, _ := strconv.Atoi(strings.TrimSpace(out)); code != 0 || n <= 10 {
		t.Fatalf("the seeded index holds %q documents (exit %d)", out, code)
	}
	status, _, a := askAnswer(t, "GET", e.answer, key, map[string]string{"q": "How do I revoke an API key?"})
	if status != 200 || a.Synthesis != "extractive" {
		t.Fatalf("%d %+v", status, a)
	}
	assertCited(t, a)
	// Every source is one of the seeded documents (nothing else is in the
	// index yet): the OpenAPI documents, or arr's reference pages (the
	// event catalog among them) served under /docs/; an OpenAPI one is
	// among them.
	openapi := false
	for _, s := range a.Sources {
		if !strings.Contains(s.URL, "/openapi.json") && !strings.HasPrefix(s.URL, e.answer+"/docs/") {
			t.Fatalf("source %q is not a seeded document: %+v", s.URL, a.Sources)
		}
		openapi = openapi || strings.Contains(s.URL, "/openapi.json")
	}
	if !openapi {
		t.Fatalf("want a seeded OpenAPI document cited, got %+v", a.Sources)
	}

	dir := t.TempDir()
	for _, art := range researchtest.Articles {
		body := "# " + art.Title + "\n\n" + strings.Join(art.Paragraphs, "\n\n") + "\n"
		if err := os.WriteFile(filepath.Join(dir, art.Slug+".md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tides.html"), []byte(researchtest.Page(researchtest.Articles[0])), 0o644); err != nil {
		t.Fatal(err)
	}
	var added struct{ Added int }
	e.mustArr(&added, "answer", "index", "add", dir, "--json")
	if added.Added != len(researchtest.Articles)+1 {
		t.Fatalf("added %d", added.Added)
	}
	status, _, a = askAnswer(t, "POST", e.answer, key, map[string]string{"q": "Why does bread rise?"})
	if status != 200 {
		t.Fatalf("%d %+v", status, a)
	}
	assertCited(t, a)
	if !strings.HasPrefix(a.Sources[0].URL, e.answer+"/docs/") || !strings.Contains(a.Answer, "yeast") {
		t.Fatalf("got %+v", a)
	}
	// A local file is served by the answer service at the URL it is cited by.
	if code, body := get(t, a.Sources[0].URL, nil); code != 200 || !strings.Contains(string(body), "yeast") {
		t.Fatalf("GET %s: %d %s", a.Sources[0].URL, code, body)
	}
	status, _, a = askAnswer(t, "POST", e.answer, key, map[string]string{"q": "What are neap tides?"})
	if status != 200 {
		t.Fatalf("%d %+v", status, a)
	}
	assertCited(t, a)
	for _, s := range a.Sources {
		for _, junk := range researchtest.Boilerplate {
			if strings.Contains(s.Content, junk) {
				t.Fatalf("boilerplate %q from %s", junk, s.URL)
			}
		}
	}
}
