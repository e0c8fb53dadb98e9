package projections_test

import (
	"context"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/logstats"
)

// TestFollowerEndsABatchLeftIdle: what a frozen holder leaves behind is
// a batch transaction holding the projection's checkpoint row and batch
// lock, idle; here its session has switched its
// idle_in_transaction_session_timeout off, as an analyst's session may.
// The runner that takes the lease ends that session and applies the
// events, and the stale batch cannot commit.
func TestFollowerEndsABatchLeftIdle(t *testing.T) {
	pool, st, r := setup(t, logstats.Projection{})
	appendN(t, st, "tick-1", 20)
	ctx := context.Background()
	stale, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Rollback(ctx) //nolint:errcheck
	if _, err := stale.Exec(ctx, `SET LOCAL idle_in_transaction_session_timeout = 0`); err != nil {
		t.Fatal(err)
	}
	if _, err := stale.Exec(ctx, `SELECT position, pg_advisory_xact_lock(hashtext('arr-projection-batch'), hashtext(name))
		FROM public.projection_checkpoints WHERE name = $1 FOR UPDATE`, logstats.Name); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(rctx) }()
	defer func() { cancel(); <-done }()
	for count(t, pool) != 20 {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the runner did not apply the events in 30s; counted %d", count(t, pool))
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(start)
	if _, err := stale.Exec(ctx, `UPDATE public.projection_checkpoints SET position = 0 WHERE name = $1`, logstats.Name); err == nil {
		if err := stale.Commit(ctx); err == nil {
			t.Fatal("the stale batch committed after the runner took the projection over")
		}
	}
	if n := count(t, pool); n != 20 {
		t.Fatalf("counted %d events, want 20", n)
	}
	t.Logf("the stale batch was ended and its events applied %s after the runner started (BatchIdle %s + LeaseCheck %s)", took.Round(time.Millisecond), projections.BatchIdle, projections.LeaseCheck)
}

// blockedReader is the data of a COPY whose client stops sending (its
// process frozen): Read blocks until release is closed, then ends the data.
type blockedReader struct{ release chan struct{} }

func (b blockedReader) Read([]byte) (int, error) {
	<-b.release
	return 0, io.EOF
}

// TestFollowerEndsABatchStuckMidCopy: a holder frozen in the middle of a
// COPY of its batch (identity writes its new rows so) leaves a session
// that is not idle: the server waits for the rest of the COPY without any
// timeout (idle_in_transaction_session_timeout does not apply, and
// neither statement_timeout nor a cancel ends a COPY waiting for its
// client), holding the checkpoint row and batch lock. The runner that
// takes the lease ends that session and applies the events, and the
// stale batch cannot commit.
func TestFollowerEndsABatchStuckMidCopy(t *testing.T) {
	pool, st, r := setup(t, logstats.Projection{})
	appendN(t, st, "tick-1", 20)
	ctx := context.Background()
	stale, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Rollback(ctx) //nolint:errcheck
	// A batch's first statement, as the runner sends it.
	if _, err := stale.Exec(ctx, `SELECT position, set_config('idle_in_transaction_session_timeout', $2, true),
		pg_try_advisory_xact_lock(hashtext('arr-projection-batch'), hashtext($1))
		FROM public.projection_checkpoints WHERE name = $1 FOR UPDATE`, logstats.Name, strconv.FormatInt(projections.BatchIdle.Milliseconds(), 10)); err != nil {
		t.Fatal(err)
	}
	if _, err := stale.Exec(ctx, `CREATE TEMP TABLE stuck_rows (x int) ON COMMIT DROP`); err != nil {
		t.Fatal(err)
	}
	backend := stale.Conn().PgConn().PID()
	release := make(chan struct{})
	copied := make(chan error, 1)
	go func() {
		_, err := stale.Conn().PgConn().CopyFrom(ctx, blockedReader{release}, `COPY stuck_rows FROM STDIN`)
		copied <- err
	}()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	for waiting := false; !waiting; time.Sleep(10 * time.Millisecond) {
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND wait_event = 'ClientRead')`, backend).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(rctx) }()
	defer func() { cancel(); <-done }()
	for count(t, pool) != 20 {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the runner did not apply the events in 30s; counted %d", count(t, pool))
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(start)
	close(release) // the frozen client wakes
	if err := <-copied; err == nil {
		t.Fatal("the stale batch's COPY completed after the runner took the projection over")
	}
	if _, err := stale.Exec(ctx, `UPDATE public.projection_checkpoints SET position = 0 WHERE name = $1`, logstats.Name); err == nil {
		if err := stale.Commit(ctx); err == nil {
			t.Fatal("the stale batch committed after the runner took the projection over")
		}
	}
	if n := count(t, pool); n != 20 {
		t.Fatalf("counted %d events, want 20", n)
	}
	t.Logf("the batch stuck mid-COPY was ended and its events applied %s after the runner started", took.Round(time.Millisecond))
}
