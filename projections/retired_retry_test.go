package projections_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/logstats"
)

// leaveRetired rebuilds logstats with r while a reader holds its live
// table, so the retired schema is left, then ends the reader.
func leaveRetired(t *testing.T, pool *pgxpool.Pool, r *projections.Runner) {
	t.Helper()
	bg := context.Background()
	holder, err := pool.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(bg) //nolint:errcheck
	if _, err := holder.Exec(bg, `LOCK TABLE rm_logstats.event_types IN ACCESS SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	if err := r.Rebuild(bg, logstats.Name, nil); err != nil {
		t.Fatal(err)
	}
	if n := retiredSchemas(t, pool); n != 1 {
		t.Fatalf("%d retired schemas while the reader holds one, want 1", n)
	}
}

// TestFollowerDropsWhatAnotherProcesssRebuildLeft: a rebuild run by
// another process (the CLI: a runner that does not run) leaves the
// retired schema while a reader holds it; the process following the
// projection drops it once the reader is gone, though it rebuilt nothing.
func TestFollowerDropsWhatAnotherProcesssRebuildLeft(t *testing.T) {
	pool, st, live := setup(t, logstats.Projection{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- live.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	appendN(t, st, "tick-a", 20)
	waitCount(t, pool, 20)
	cli, err := projections.NewRunner(pool, st, projections.Config{}, logstats.Projection{})
	if err != nil {
		t.Fatal(err)
	}
	leaveRetired(t, pool, cli)
	start := time.Now()
	for retiredSchemas(t, pool) != 0 {
		if time.Since(start) > time.Minute {
			t.Fatal("the following process did not drop the retired schema within a minute of its reader's end")
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("dropped %s after its reader ended (retry every 5s)", time.Since(start).Round(time.Millisecond))
	appendN(t, st, "tick-b", 2)
	waitCount(t, pool, 22)
}

// TestSwapGoesOnWhenADropTakesTheRetiredSchemaFirst: a swap renames a
// retired schema left aside; a drop of it tried meanwhile (a follower's
// retry) holds the schema, and the rename waits for it. When the drop
// commits the rename finds no schema, and the swap goes on instead of
// failing the rebuild.
func TestSwapGoesOnWhenADropTakesTheRetiredSchemaFirst(t *testing.T) {
	pool, st, r := setup(t, logstats.Projection{})
	appendN(t, st, "tick-a", 20)
	leaveRetired(t, pool, r)
	bg := context.Background()
	drop, err := pool.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer drop.Rollback(bg) //nolint:errcheck
	if _, err := drop.Exec(bg, `DROP SCHEMA rm_logstats__retired CASCADE`); err != nil {
		t.Fatal(err)
	}
	rebuilt := make(chan error, 1)
	go func() { rebuilt <- r.Rebuild(bg, logstats.Name, nil) }()
	waitForLockWait(t, pool, rebuilt)
	if err := drop.Commit(bg); err != nil {
		t.Fatal(err)
	}
	if err := <-rebuilt; err != nil {
		t.Fatalf("the rebuild whose swap met a drop of the retired schema: %v, want it done", err)
	}
	if n := count(t, pool); n != 20 {
		t.Fatalf("counted %d events after the rebuild, want 20", n)
	}
	if n := retiredSchemas(t, pool); n != 0 {
		t.Fatalf("%d retired schemas left, want 0", n)
	}
}

// waitForLockWait returns once a session of the database waits for a
// lock (the swap's rename, behind the drop), or fails if done ends first.
func waitForLockWait(t *testing.T, pool *pgxpool.Pool, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var n int
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("the rebuild ended (%v) before its swap waited for the drop", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("no session waited for the drop's lock within a minute")
}
