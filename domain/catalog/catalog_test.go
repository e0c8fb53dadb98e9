package catalog_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/catalog"
)

// TestRegistryHoldsEveryType: the registry builds (no type twice, every
// type above version 1 upcasts) and decodes each type's zero payload.
func TestRegistryHoldsEveryType(t *testing.T) {
	r := catalog.Registry()
	if n := len(r.Types()); n < 20 {
		t.Fatalf("only %d event types registered", n)
	}
	for _, typ := range r.Types() {
		e := r.New(typ)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		for v := 1; v <= e.SchemaVersion(); v++ {
			if _, err := r.Decode(typ, v, b); err != nil {
				t.Errorf("%s v%d: %v", typ, v, err)
			}
		}
		if _, err := r.Decode(typ, e.SchemaVersion()+1, b); err == nil {
			t.Errorf("%s: a version newer than the build decoded", typ)
		}
	}
	if _, err := r.Decode("NoSuchThingHappened", 1, []byte(`{}`)); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown type: %v", err)
	}
}

// TestUpcastOldVersions: a version 1 CompletionRecorded (no link field)
// decodes with link algorithm 1; a version 2 keeps its own; a version 1
// AnswerSynthesized decodes with no retrieval recorded.
func TestUpcastOldVersions(t *testing.T) {
	r := catalog.Registry()
	v1, err := domain.DecodeAs[*audit.CompletionRecorded](r, "CompletionRecorded", 1, []byte(`{"seq":3,"prev_hash":"a","hash":"b","payload":{}}`))
	if err != nil || v1.Link != audit.LinkV1 || v1.Seq != 3 {
		t.Fatalf("v1: %+v %v", v1, err)
	}
	v2, err := domain.DecodeAs[*audit.CompletionRecorded](r, "CompletionRecorded", 2, []byte(`{"seq":4,"prev_hash":"b","hash":"c","payload":{},"link":2}`))
	if err != nil || v2.Link != audit.LinkV2 {
		t.Fatalf("v2: %+v %v", v2, err)
	}
	a, err := domain.DecodeAs[*answer.AnswerSynthesized](r, "AnswerSynthesized", 1, []byte(`{"answer":"x"}`))
	if err != nil || a.Answer != "x" || a.Retrieval != nil {
		t.Fatalf("answer v1: %+v %v", a, err)
	}
	if _, err := domain.DecodeAs[*answer.AnswerSynthesized](r, "CompletionRecorded", 2, []byte(`{}`)); err == nil {
		t.Fatal("decoded a CompletionRecorded as an AnswerSynthesized")
	}
}

// TestUpcastFiltersAndDates: a version 2 AnswerSynthesized decodes with no
// filters and sources without a date; a version 1 DocumentIndexed with no
// date; a version 4 of either is refused.
func TestUpcastFiltersAndDates(t *testing.T) {
	r := catalog.Registry()
	a, err := domain.DecodeAs[*answer.AnswerSynthesized](r, "AnswerSynthesized", 2,
		[]byte(`{"answer":"x [1]","sources":[{"title":"t","url":"https://example.com/","content":"c"}],"retrieval":{"query":"q","passages":[]}}`))
	if err != nil || a.Filters != nil || len(a.Sources) != 1 || a.Sources[0].PublishedDate != nil || a.Retrieval == nil {
		t.Fatalf("answer v2: %+v %v", a, err)
	}
	b, _ := json.Marshal(a.Sources[0])
	if string(b) != `{"title":"t","url":"https://example.com/","content":"c","published_date":null,"snippet":""}` {
		t.Fatalf("a v2 source reads as %s", b)
	}
	d, err := domain.DecodeAs[*answer.DocumentIndexed](r, "DocumentIndexed", 1, []byte(`{"doc_id":"abc","url":"https://example.com/","origin":"https://example.com/","title":"t","content_hash":"h","sections":[]}`))
	if err != nil || d.Published != "" || d.DocID != "abc" {
		t.Fatalf("document v1: %+v %v", d, err)
	}
	if _, err := domain.DecodeAs[*answer.DocumentIndexed](r, "DocumentIndexed", 4, []byte(`{}`)); err == nil {
		t.Fatal("decoded a DocumentIndexed of a version that does not exist")
	}
}
