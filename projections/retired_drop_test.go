package projections_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/projections/logstats"
)

// retiredSchemas counts the retired schemas of logstats left behind.
func retiredSchemas(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'rm\_logstats\_\_retired%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReplayDefersTheDropOfAHeldRetiredSchema: a reader still holding a
// table of the read model a replay retires (a long export) does not hold
// the replay up, and no query queues behind the drop: the drop gives up
// at its short lock timeout and the retired schema is left, for the next
// replay or setup, which drops it once the reader is gone. Two replays
// in a row while the reader holds on do not wait for it either.
func TestReplayDefersTheDropOfAHeldRetiredSchema(t *testing.T) {
	pool, st, r := setup(t, logstats.Projection{})
	appendN(t, st, "tick-a", 20)
	bg := context.Background()
	holder, err := pool.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(bg) //nolint:errcheck
	if _, err := holder.Exec(bg, `LOCK TABLE rm_logstats.event_types IN ACCESS SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		ctx, cancel := context.WithTimeout(bg, 15*time.Second)
		err := r.Rebuild(ctx, logstats.Name, nil)
		waited := ctx.Err()
		cancel()
		if err != nil || waited != nil {
			t.Fatalf("rebuild %d while a reader holds the retired table: %v (context: %v), want it done without waiting for the reader", i+1, err, waited)
		}
		var waiting int
		if err := pool.QueryRow(bg, `SELECT count(*) FROM pg_locks WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting != 0 {
			t.Fatalf("after rebuild %d, %d lock requests wait (a drop queued behind the reader)", i+1, waiting)
		}
		// Readers of the live read model are not held up.
		rctx, rcancel := context.WithTimeout(bg, 5*time.Second)
		var n int64
		err = pool.QueryRow(rctx, `SELECT coalesce(sum(events), 0) FROM rm_logstats.event_types`).Scan(&n)
		rcancel()
		if err != nil || n != 20 {
			t.Fatalf("reading the live read model after rebuild %d: %d, %v", i+1, n, err)
		}
	}
	if n := retiredSchemas(t, pool); n != 1 {
		t.Fatalf("%d retired schemas while the reader holds one, want 1 (the held one; the unheld one dropped)", n)
	}
	if err := holder.Rollback(bg); err != nil {
		t.Fatal(err)
	}
	// Once the reader is gone, the next setup (a process starting)
	// drops what was left.
	if err := r.Setup(bg); err != nil {
		t.Fatal(err)
	}
	if n := retiredSchemas(t, pool); n != 0 {
		t.Fatalf("%d retired schemas left after the reader ended and setup ran, want 0", n)
	}
}
