package answer_test

import (
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
)

// TestAnswerFoundUpcast: an AnswerSynthesized of schema versions 1 to 3
// has no answer_found; decoded through the registry it is found unless
// its synthesis is no_sources. A version 4 payload keeps what it says.
func TestAnswerFoundUpcast(t *testing.T) {
	reg := domain.NewRegistry(answer.Events())
	for _, tc := range []struct {
		version int
		data    string
		want    bool
	}{
		{1, `{"answer":"Ferries leave at nine [1].","synthesis":"extractive"}`, true},
		{2, `{"answer":"Ferries leave at nine [1].","synthesis":"llm"}`, true},
		{3, `{"answer":"No sources matched this question.","synthesis":"no_sources","sources":[]}`, false},
		{3, `{"answer":"x"}`, true},
		{4, `{"answer":"The indexed sources do not answer this question.","synthesis":"extractive","answer_found":false}`, false},
		{4, `{"answer":"Ferries leave at nine [1].","synthesis":"extractive","answer_found":true}`, true},
	} {
		e, err := reg.Decode("AnswerSynthesized", tc.version, []byte(tc.data))
		if err != nil {
			t.Fatalf("v%d %s: %v", tc.version, tc.data, err)
		}
		a := e.(*answer.AnswerSynthesized)
		if a.AnswerFound != tc.want || a.Answer == "" {
			t.Fatalf("v%d %s: answer_found %v, want %v (%+v)", tc.version, tc.data, a.AnswerFound, tc.want, a)
		}
	}
	if _, err := reg.Decode("AnswerSynthesized", 2, []byte(`[1,2]`)); err == nil {
		t.Fatal("a payload that is no object upcast")
	}
}
