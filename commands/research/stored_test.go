package research_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands/research"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections/answerdocs"
	"github.com/arr-dev/arr/projections/answerdocs/answerdocstest"
)

func topDoc(t *testing.T, s *research.Stored, q string) string {
	t.Helper()
	got, idx, err := s.SearchPassages(context.Background(), q, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		return ""
	}
	if idx.Generation == 0 {
		t.Fatalf("search of %q: index generation 0", q)
	}
	return got[0].DocID
}

// TestStoredSearchesEachVersionAtOnce: over the read model (real
// PostgreSQL, documents applied by the projection), a document added is
// found by the next search, and a document replaced is found by its new
// text and no longer by its old.
func TestStoredSearchesEachVersionAtOnce(t *testing.T) {
	x := newIndex(t)
	s := research.NewStored(answerdocs.NewQueries(x.Pool), research.DefaultWeights)
	x.Add(t,
		answerdocstest.Doc("quorvin", "Quorvin engine", []string{"Speed"}, "The Quorvin engine runs at 3100 rpm by default. It is cooled by water."),
		answerdocstest.Doc("json", "json — JSON encoder", []string{"Basic Usage"}, "The indent parameter defaults to None."),
	)
	if got := topDoc(t, s, "zorblax engine speed"); got != "quorvin" {
		t.Fatalf("before the Zorblax page: best %q, want quorvin (the only engine)", got)
	}
	x.Add(t, answerdocstest.Doc("zorblax", "Zorblax engine", []string{"Speed"}, "The Zorblax engine runs at 4200 rpm by default."))
	if got := topDoc(t, s, "How fast does the Zorblax engine run?"); got != "zorblax" {
		t.Fatalf("after adding the Zorblax page: best %q", got)
	}
	x.Add(t, answerdocstest.Doc("json", "json — JSON encoder", []string{"Basic Usage"}, "The separators parameter is a tuple."))
	if got := topDoc(t, s, "indent"); got != "" {
		t.Fatalf("old text still found: %q", got)
	}
	if got := topDoc(t, s, "json separators tuple"); got != "json" {
		t.Fatalf("new text: best %q", got)
	}
	g, err := s.Generation(context.Background())
	if err != nil || g == 0 {
		t.Fatalf("generation %d, %v", g, err)
	}
}

// TestStoredSearchHonoursItsTimeout: a search whose bound has passed
// fails as unavailable, with the deadline as its cause, rather than
// waiting on the database.
func TestStoredSearchHonoursItsTimeout(t *testing.T) {
	x := newIndex(t)
	x.Add(t, answerdocstest.Doc("zorblax", "Zorblax engine", nil, "The Zorblax engine runs at 4200 rpm by default."))
	s := research.NewStored(answerdocs.NewQueries(x.Pool), research.DefaultWeights)
	s.Timeout = time.Nanosecond
	_, _, err := s.SearchPassages(context.Background(), "zorblax engine", 5)
	if !errors.Is(err, domain.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("search past its timeout: %v, want unavailable by the deadline", err)
	}
	s.Timeout = research.DefaultSearchTimeout
	if got := topDoc(t, s, "zorblax engine"); got != "zorblax" {
		t.Fatalf("with the default timeout: best %q", got)
	}
}

func newIndex(t *testing.T) *answerdocstest.Index {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	return answerdocstest.New(t, pool)
}
