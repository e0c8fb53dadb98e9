// Package answerdocstest indexes documents into the answer_docs read
// model of a test's own database through the real path: DocumentIndexed
// events appended to the PostgreSQL event store, applied by the
// projection runner.
package answerdocstest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/answerdocs"
	"github.com/arr-dev/arr/projections/projectiontest"
)

// Index is a test's local index: its pool, event store and runner.
type Index struct {
	Pool   *pgxpool.Pool
	Store  eventstore.Store
	Runner *projections.Runner
}

// New returns an empty local index on pool (a migrated database of the
// test's own, e.g. migratetest.NewPool's).
func New(t *testing.T, pool *pgxpool.Pool) *Index {
	t.Helper()
	p, st, r := projectiontest.Setup(t, pool, answerdocs.Projection{})
	return &Index{Pool: p, Store: st, Runner: r}
}

// Doc is a one-section document of prose paragraphs.
func Doc(id, title string, heading []string, paragraphs ...string) answer.DocumentIndexed {
	s := answer.Section{Heading: heading}
	for _, p := range paragraphs {
		s.Blocks = append(s.Blocks, answer.Block{Kind: answer.Prose, Text: p})
	}
	d := answer.DocumentIndexed{DocID: id, URL: "http://127.0.0.1/" + id, Origin: "http://127.0.0.1/" + id, Title: title,
		Sections: []answer.Section{s}, IndexedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	d.ContentHash = answer.ContentHash(d.Title, d.Sections)
	return d
}

// Add appends each document's version and applies it: the read model
// holds them when Add returns.
func (x *Index) Add(t *testing.T, docs ...answer.DocumentIndexed) {
	t.Helper()
	ctx := context.Background()
	for _, d := range docs {
		e, err := eventstore.Encode(d, eventstore.Metadata{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.Store.Append(ctx, answer.DocumentStreamID(d.DocID), eventstore.Any(), e); err != nil {
			t.Fatal(err)
		}
	}
	for range 1000 {
		_, n, err := x.Runner.Step(ctx, answerdocs.Name)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("the projection did not catch up in 1000 steps")
}
