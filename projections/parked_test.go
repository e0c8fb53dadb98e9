package projections_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
)

// parkedOf lists every event projection name parked ("" for all), page
// by page.
func parkedOf(t *testing.T, pool *pgxpool.Pool, name string) []projections.ParkedEvent {
	t.Helper()
	var out []projections.ParkedEvent
	q := projections.ParkedQuery{Projection: name}
	for range 1000 {
		page, err := projections.ListParked(context.Background(), pool, q)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Events...)
		if page.NextAfter == nil {
			if int64(len(out)) != page.Total {
				t.Fatalf("the pages of %q list %d events, the total says %d", name, len(out), page.Total)
			}
			return out
		}
		q.After = *page.NextAfter
	}
	t.Fatalf("more than 1000 pages of parked events of %q", name)
	return nil
}

// TestListParkedPagesByPosition: pages list every parked event once, in
// position order, with the true total on each; listing every projection,
// a page keeps the events two projections parked at one position
// together.
func TestListParkedPagesByPosition(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	ctx := context.Background()
	// a parked 1..250, b parked 100..109.
	if _, err := pool.Exec(ctx, `INSERT INTO projection_parked (projection, position, event_id, event_type, error)
		SELECT 'a', p, gen_random_uuid(), 'Ticked', 'no' FROM generate_series(1, 250) p
		UNION ALL SELECT 'b', p, gen_random_uuid(), 'Ticked', 'no' FROM generate_series(100, 109) p`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		q          projections.ParkedQuery
		events     int
		total      int64
		first      uint64
		next       string
		wantErrMsg string
	}{
		{name: "default limit", q: projections.ParkedQuery{Projection: "a"}, events: 100, total: 250, first: 1, next: "100"},
		{name: "after", q: projections.ParkedQuery{Projection: "a", After: 200, Limit: 30}, events: 30, total: 250, first: 201, next: "230"},
		{name: "last page", q: projections.ParkedQuery{Projection: "a", After: 200, Limit: 50}, events: 50, total: 250, first: 201, next: "<nil>"},
		{name: "past the end", q: projections.ParkedQuery{Projection: "a", After: 250}, events: 0, total: 250, next: "<nil>"},
		{name: "every projection, a tie at the cut", q: projections.ParkedQuery{Limit: 100}, events: 101, total: 260, first: 1, next: "100"},
		{name: "one projection's own", q: projections.ParkedQuery{Projection: "b", Limit: 4}, events: 4, total: 10, first: 100, next: "103"},
		{name: "none", q: projections.ParkedQuery{Projection: "c"}, events: 0, total: 0, next: "<nil>"},
		{name: "limit too big", q: projections.ParkedQuery{Limit: projections.MaxParkedLimit + 1}, wantErrMsg: "limit 10001 is not in 1..10000"},
		{name: "negative limit", q: projections.ParkedQuery{Limit: -1}, wantErrMsg: "limit -1 is not in 1..10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := projections.ListParked(ctx, pool, tc.q)
			if tc.wantErrMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrMsg) {
					t.Fatalf("err = %v, want %q", err, tc.wantErrMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			next := "<nil>"
			if page.NextAfter != nil {
				next = fmt.Sprint(*page.NextAfter)
			}
			if len(page.Events) != tc.events || page.Total != tc.total || next != tc.next || (tc.events > 0 && page.Events[0].Position != tc.first) {
				t.Fatalf("page: %d events from %v, total %d, next %s; want %d from %d, total %d, next %s",
					len(page.Events), firstPos(page.Events), page.Total, next, tc.events, tc.first, tc.total, tc.next)
			}
		})
	}
	all := parkedOf(t, pool, "")
	seen := map[string]bool{}
	for i, pe := range all {
		k := fmt.Sprint(pe.Projection, pe.Position)
		if seen[k] || (i > 0 && all[i-1].Position > pe.Position) {
			t.Fatalf("event %s listed twice or out of order", k)
		}
		seen[k] = true
	}
	if len(all) != 260 {
		t.Fatalf("every projection's pages list %d events, want 260", len(all))
	}
	if n, err := projections.CountParked(ctx, pool, "b"); err != nil || n != 10 {
		t.Fatalf("CountParked(b) = %d, %v", n, err)
	}
}

func firstPos(evs []projections.ParkedEvent) any {
	if len(evs) == 0 {
		return nil
	}
	return evs[0].Position
}
