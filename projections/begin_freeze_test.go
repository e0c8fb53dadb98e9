package projections_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/logstats"
	"github.com/arr-dev/arr/projections/projectiontest"
)

// freezer begins transactions in pool; once armed, the first it begins
// is left as a process frozen right after its BEGIN round trip leaves
// it: the batch's first statement parsed by the server (pgx prepares a
// statement in a round trip of its own the first time a connection runs
// it, and parsing a SELECT … FOR UPDATE takes its relation lock), nothing
// executed. BeginTx then blocks, like the frozen process, until thawed.
type freezer struct {
	pool    *pgxpool.Pool
	armed   atomic.Bool
	backend chan uint32
	thawed  chan struct{}
}

func (f *freezer) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	tx, err := f.pool.BeginTx(ctx, opts)
	if err != nil || !f.armed.CompareAndSwap(true, false) {
		return tx, err
	}
	if _, err := tx.Prepare(ctx, "frozen_batch", `SELECT position FROM public.projection_checkpoints WHERE name = $1 FOR UPDATE SKIP LOCKED`); err != nil {
		_ = tx.Rollback(ctx)
		return nil, err
	}
	f.backend <- tx.Conn().PgConn().PID()
	<-f.thawed
	return tx, nil
}

// frozenLogStats is LogStats whose transactions freezer begins.
type frozenLogStats struct {
	logstats.Projection
	f *freezer
}

func (p frozenLogStats) Spec() projections.Spec {
	s := p.Projection.Spec()
	s.TxPool = p.f
	return s
}

// TestBatchFrozenAfterBeginIsEnded: a process frozen between its batch's
// BEGIN and the statement that locks the checkpoint leaves a session
// idle in its transaction, holding the lock the server took parsing that
// statement. Nothing of the next holder finds it (it holds neither the
// checkpoint row nor the batch lock), so the server must end it: the
// batch's bound on idling is set in the BEGIN's own round trip. Once the
// process wakes, its batch fails and the next applies the events once.
func TestBatchFrozenAfterBeginIsEnded(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	f := &freezer{pool: pool, backend: make(chan uint32, 1), thawed: make(chan struct{})}
	_, st, r := projectiontest.Setup(t, pool, frozenLogStats{f: f})
	appendN(t, st, "tick-1", 20)
	f.armed.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	thaw := func() {
		select {
		case <-f.thawed:
		default:
			close(f.thawed)
		}
	}
	defer func() { thaw(); cancel(); <-done }()
	backend := <-f.backend
	var mode string
	if err := pool.QueryRow(context.Background(), `SELECT coalesce(string_agg(l.mode, ','), '') FROM pg_locks l
		WHERE l.pid = $1 AND l.locktype = 'relation' AND l.relation = 'public.projection_checkpoints'::regclass AND l.granted`, backend).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "RowShareLock" {
		t.Fatalf("the frozen batch's session holds %q on projection_checkpoints; want RowShareLock (the state under test)", mode)
	}
	frozen := time.Now()
	for alive := true; alive; time.Sleep(50 * time.Millisecond) {
		if err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, backend).Scan(&alive); err != nil {
			t.Fatal(err)
		}
		if alive && time.Since(frozen) > 3*projections.LeaseTakeover {
			var state string
			_ = pool.QueryRow(context.Background(), `SELECT state || ', ' || (now() - state_change)::text FROM pg_stat_activity WHERE pid = $1`, backend).Scan(&state)
			t.Fatalf("the session of a batch frozen after its BEGIN (backend %d) is still open after %s: %s; nothing ends it", backend, 3*projections.LeaseTakeover, state)
		}
	}
	ended := time.Since(frozen)
	thaw()
	for start := time.Now(); count(t, pool) != 20; time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the woken runner did not apply the events in 30s; counted %d", count(t, pool))
		}
	}
	if n := count(t, pool); n != 20 {
		t.Fatalf("counted %d events, want 20", n)
	}
	t.Logf("the session of the batch frozen after its BEGIN was ended by the server %s after the freeze (BatchIdle %s); the woken runner applied the 20 events once", ended.Round(time.Millisecond), projections.BatchIdle)
}
