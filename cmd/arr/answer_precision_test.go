package main_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// enginePages are the loopback pages of two engines the precision test
// indexes: every sentence about the Quorvin engine shares most words with
// a question about the Zorblax engine.
var enginePages = map[string][]string{
	"/engines": {"The Zorblax engine runs at 4200 rpm by default. The Quorvin engine runs at 3100 rpm by default. It is cooled by air."},
	"/service": {"The Zorblax engine is serviced every 500 hours. The Quorvin engine is serviced every 800 hours."},
}

// TestAnswerSubjectPrecision: through the answer service (loopback site
// indexed locally, no language model: extractive), a follow-up whose
// resolved_query is about the Zorblax engine is answered with the Zorblax
// engine's fact only — not the Quorvin engine's, nor "It is cooled by
// air." whose antecedent is the Quorvin engine — and answer_found is true,
// also on the cached answer; a question whose fact is not in the index is
// answered "not found" in one sentence with the closest sources listed
// and answer_found false, in the plain body and in the stream's done
// object alike.
func TestAnswerSubjectPrecision(t *testing.T) {
	// The engines' pages among others (the citation tests' ferry, tour
	// and lens): "Zorblax" is a name of the index, not every page's word.
	pages := map[string]string{"/ferry": article("Island ferry", ferryParas), "/tour": article("Tower tour", tourParas), "/lens": article("The lens", lensParas)}
	for path, paras := range enginePages {
		pages[path] = article("Engines "+path[1:], paras)
	}
	site := newLoopSite(t, pages)
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_FETCH_PRIVATE=allow", "ARR_ANSWER_SEED=off", "ARR_ANSWER_LLM_BASE_URL=http://127.0.0.1:1/v1")
	e.up()
	e.createAccount("precision@example.com", "free")
	key := e.mint("precision@example.com", "answer").Secret
	if o, errs, code := indexAdd(t, e, site.srv.URL+"/engines", site.srv.URL+"/service", site.srv.URL+"/ferry", site.srv.URL+"/tour", site.srv.URL+"/lens"); code != 0 || o.Added != 5 {
		t.Fatalf("index add: exit %d %+v %s", code, o, errs)
	}

	conv := []map[string]string{
		{"role": "user", "content": "What is the Zorblax engine?"},
		{"role": "assistant", "content": "An engine described on the engines page [1]."},
	}
	status, f := postAnswer(t, e.answer, key, map[string]any{"q": "How many rpm does it run at by default?", "messages": conv})
	if status != 200 || f.Synthesis != "extractive" {
		t.Fatalf("%d %+v", status, f)
	}
	if !strings.Contains(f.ResolvedQuery, "Zorblax engine") {
		t.Fatalf("resolved_query %q is not about the Zorblax engine", f.ResolvedQuery)
	}
	if f.AnswerFound == nil || !*f.AnswerFound {
		t.Fatalf("answer_found %v, want true: resolved %q, %q", f.AnswerFound, f.ResolvedQuery, f.Answer)
	}
	assertCited(t, f)
	if !strings.Contains(f.Answer, "The Zorblax engine runs at 4200 rpm by default") {
		t.Fatalf("the Zorblax engine's fact is not stated: %q", f.Answer)
	}
	for _, other := range []string{"Quorvin", "3100", "cooled by air", "800 hours"} {
		if strings.Contains(f.Answer, other) {
			t.Fatalf("the answer about the Zorblax engine states %q, another subject's fact: %q", other, f.Answer)
		}
	}
	if f.AnswerFound == nil || !*f.AnswerFound {
		t.Fatalf("answer_found %v, want true: %+v", f.AnswerFound, f)
	}
	status, c := postAnswer(t, e.answer, key, map[string]any{"q": f.ResolvedQuery})
	if status != 200 || !c.Cached || c.Answer != f.Answer || c.AnswerFound == nil || !*c.AnswerFound {
		t.Fatalf("the cached answer: %d %+v", status, c)
	}

	// The fact is not in the index: said so, closest sources listed.
	const unanswerable = "What is the default timeout of the Zorblax engine?"
	status, n := postAnswer(t, e.answer, key, map[string]any{"q": unanswerable})
	if status != 200 || n.AnswerFound == nil || *n.AnswerFound {
		t.Fatalf("not found: %d answer_found %v: %+v", status, n.AnswerFound, n)
	}
	if !strings.Contains(n.Answer, "do not answer") || strings.Contains(n.Answer, "[") || strings.Count(n.Answer, ".") != 1 ||
		len(n.Sources) == 0 || len(n.Sources) > 3 || len(n.Citations) != 0 {
		t.Fatalf("not found: one sentence, no marker, the closest sources: %+v", n)
	}
	for _, src := range n.Sources {
		if !strings.HasPrefix(src.URL, site.srv.URL+"/") || src.Snippet == "" {
			t.Fatalf("a closest source %+v", src)
		}
	}
	// The stream's done object says the same, byte for byte the body.
	resp := postAnswerStream(context.Background(), t, e.answer, key, `{"q":"`+unanswerable+`","stream":true}`, nil)
	s := parseStreamed(t, readEvents(t, resp))
	s.wellFormed(t)
	var done answerBody
	if err := json.Unmarshal(s.done, &done); err != nil {
		t.Fatalf("done %s: %v", s.done, err)
	}
	if done.AnswerFound == nil || *done.AnswerFound || done.Answer != n.Answer || !done.Cached {
		t.Fatalf("the stream's done object: %s", s.done)
	}
	if strings.Join(s.deltas, "") != n.Answer {
		t.Fatalf("deltas %q, answer %q", s.deltas, n.Answer)
	}
}
