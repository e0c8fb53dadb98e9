package commands_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

func TestIndexDocument(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	h, err := commands.NewIndexDocumentHandler(st, func() time.Time { return time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	doc := func(text string) commands.IndexDocument {
		return commands.IndexDocument{URL: "http://127.0.0.1:9/guide.html", Title: "Guide",
			Sections: []answer.Section{{Heading: []string{"Guide"}, Blocks: []answer.Block{{Kind: answer.Prose, Text: text}}}}}
	}
	steps := []struct {
		name    string
		cmd     commands.IndexDocument
		outcome string
		code    string
	}{
		{"a new document is added", doc("The default port is 8081."), "added", ""},
		{"the same content again records nothing", doc("The default port is 8081."), "unchanged", ""},
		{"changed content updates it in place", doc("The default port is 9091."), "updated", ""},
		{"a document with no text is refused", doc("   "), "", "document_empty"},
		{"a relative URL is refused", commands.IndexDocument{URL: "/guide.html", Sections: doc("x").Sections}, "", "invalid_url"},
		{"a URL with a NUL is refused", commands.IndexDocument{URL: "http://127.0.0.1:9/a\x00b", Sections: doc("x").Sections}, "", "invalid_url"},
	}
	var id string
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			before, _ := st.Head(ctx)
			res, err := h.Handle(ctx, s.cmd)
			after, _ := st.Head(ctx)
			if s.code != "" {
				var de *domain.Error
				if !errors.As(err, &de) || de.Code != s.code || !errors.Is(err, domain.ErrInvalid) {
					t.Fatalf("Handle = %v, want %s", err, s.code)
				}
				if after != before {
					t.Fatalf("a refused document appended %d events", after-before)
				}
				return
			}
			if err != nil || res.Outcome != s.outcome {
				t.Fatalf("Handle = %+v, %v; want %s", res, err, s.outcome)
			}
			if id == "" {
				id = res.DocID
			}
			if res.DocID != id {
				t.Fatalf("the same URL got another document id: %s, %s", res.DocID, id)
			}
			appended := after - before
			if (s.outcome == "unchanged") != (appended == 0) {
				t.Fatalf("%s appended %d events", s.outcome, appended)
			}
		})
	}
}
