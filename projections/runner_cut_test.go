package projections_test

import (
	"context"
	"testing"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/logstats"
)

// threeAtATime is LogStats whose Cut keeps at most three events a batch,
// recording how many events each read handed it.
type threeAtATime struct {
	logstats.Projection
	offered *[]int
}

func (p threeAtATime) Spec() projections.Spec {
	spec := p.Projection.Spec()
	spec.Name = "three_at_a_time"
	spec.Cut = func(events []eventstore.Event) int {
		*p.offered = append(*p.offered, len(events))
		return min(3, len(events))
	}
	return spec
}

// TestReadsFollowTheCut: after a batch Cut cut short, the next read asks
// for about as many events as the batch kept, not BatchSize (a bulk load's
// row chunks were read again and again, the whole rest of the load for
// every batch); every event is still applied once.
func TestReadsFollowTheCut(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var offered []int
	r, err := projections.NewRunner(pool, st, projections.Config{BatchSize: 100}, threeAtATime{offered: &offered})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	pos := appendN(t, st, "tick-cut", 20)
	if err := r.WaitFor(ctx, "three_at_a_time", pos); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(events), 0) FROM rm_three_at_a_time.event_types`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 20 {
		t.Fatalf("%d events counted, want 20 (once each)", n)
	}
	if len(offered) < 7 || offered[0] != 20 {
		t.Fatalf("reads offered Cut %v: want all 20 events first, then batches of at most three", offered)
	}
	for _, k := range offered[1:] {
		if k > 4 {
			t.Fatalf("reads offered Cut %v: after the first, at most 4 events a read (3 kept, an eighth more, one more)", offered)
		}
	}
}
