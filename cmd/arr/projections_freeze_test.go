package main_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/projections"
)

// freezeBound is the bound docs/scale-out.md states for the projections
// of a frozen holder to move: LeaseTakeover (8 s) for their leases, then
// 2 s for the first batches of the new holder (10 s in all).
const freezeBound = projections.LeaseTakeover + 2*time.Second

// startNamed starts `arr serve projections` whose database sessions carry
// application_name name, so the test can see its transactions.
func (e *env) startNamed(name string) *proc {
	e.t.Helper()
	u, err := url.Parse(e.dbURL)
	if err != nil {
		e.t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	saved := e.extraEnv
	e.extraEnv = append(slices.Clone(saved), "DATABASE_URL="+u.String())
	defer func() { e.extraEnv = saved }()
	return e.start("serve", "projections")
}

// batchBackend returns the backend of name's sessions that is in a batch
// transaction holding a projection's checkpoint row (its SELECT … FOR
// UPDATE), or 0.
func batchBackend(t testing.TB, pool *pgxpool.Pool, name string) int {
	t.Helper()
	var pid int
	err := pool.QueryRow(context.Background(), `SELECT coalesce(min(a.pid), 0) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE a.application_name = $1 AND l.locktype = 'relation' AND l.granted
		AND l.relation = 'public.projection_checkpoints'::regclass AND l.mode = 'RowShareLock'`, name).Scan(&pid)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestProjectionsMoveOnFreeze: of two `arr serve projections` processes,
// the one holding every lease is frozen (SIGSTOP) in the middle of a
// batch, its transaction holding a checkpoint row. Its leases expire, the
// other takes them and every projection passes the log head of the
// freeze within the stated bound; the frozen batch's session is ended by
// the server, so when the holder wakes (SIGCONT) its batch cannot commit,
// it finds its leases lost, and the read models end equal to a fresh
// rebuild: nothing lost, nothing counted twice.
func TestProjectionsMoveOnFreeze(t *testing.T) {
	e := newEnv(t)
	e.createAccount("seed@example.com", "free") // sets the read models up
	pool, st := openStore(t, e.dbURL)
	var projections int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM projection_checkpoints WHERE name NOT LIKE 'fanout:%'`).Scan(&projections); err != nil {
		t.Fatal(err)
	}
	// The first process takes every lease before the second starts (two
	// that start together may share them), then the second stands by.
	procs := map[int]*proc{}
	names := map[int]string{}
	var holder int
	for i, n := range []string{"arr-freeze-a", "arr-freeze-b"} {
		p := e.startNamed(n)
		procs[p.cmd.Process.Pid], names[p.cmd.Process.Pid] = p, n
		// A process left stopped could not stop at the end.
		t.Cleanup(func() { _ = p.cmd.Process.Signal(syscall.SIGCONT) })
		for deadline := time.Now().Add(60 * time.Second); i == 0 && holder == 0; time.Sleep(100 * time.Millisecond) {
			if leaseHolders(t, pool, "projection")[p.cmd.Process.Pid] == projections {
				holder = p.cmd.Process.Pid
			}
			if time.Now().After(deadline) {
				t.Fatalf("the first process does not hold all %d projection leases: %v", projections, leaseHolders(t, pool, "projection"))
			}
		}
	}
	var other int
	for pid := range procs {
		if pid != holder {
			other = pid
		}
	}
	stop := make(chan struct{})
	wg := writeTraffic(t, st, stop, 2)
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
			wg.Wait()
		}
	}()
	time.Sleep(time.Second)

	// Stop the holder while a batch transaction of it holds a checkpoint
	// row, and still holds it once stopped (its last statement done).
	var frozenBackend int
	var frozen time.Time
	for try := 0; frozenBackend == 0; try++ {
		if try == 200 {
			t.Fatalf("could not stop the holder in the middle of a batch in %d tries", try)
		}
		for until := time.Now().Add(2 * time.Second); batchBackend(t, pool, names[holder]) == 0 && time.Now().Before(until); {
			time.Sleep(time.Millisecond)
		}
		_ = procs[holder].cmd.Process.Signal(syscall.SIGSTOP)
		frozen = time.Now()
		time.Sleep(100 * time.Millisecond)
		if frozenBackend = batchBackend(t, pool, names[holder]); frozenBackend == 0 {
			_ = procs[holder].cmd.Process.Signal(syscall.SIGCONT)
			time.Sleep(50 * time.Millisecond)
		}
	}
	signer := leaseHolders(t, pool, "head signer")[holder] == 1
	var headAtFreeze int64
	if err := pool.QueryRow(context.Background(), `SELECT position FROM event_log_head`).Scan(&headAtFreeze); err != nil {
		t.Fatal(err)
	}

	// The other process takes every lease and every projection moves past
	// the head of the freeze while the holder is still stopped.
	var behind int
	for {
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM projection_checkpoints WHERE position < $1 AND name NOT LIKE 'fanout:%'`, headAtFreeze).Scan(&behind); err != nil {
			t.Fatal(err)
		}
		if behind == 0 && leaseHolders(t, pool, "projection")[other] == projections {
			break
		}
		if time.Since(frozen) > freezeBound {
			// Which projections are behind, and what the frozen backend
			// was doing, for the next reader of a failure.
			var detail string
			_ = pool.QueryRow(context.Background(), `SELECT coalesce(string_agg(c.name || ' at ' || c.position, ', '), '') || '; frozen backend: ' ||
				coalesce((SELECT a.state || ' ' || left(a.query, 120) FROM pg_stat_activity a WHERE a.pid = $2), 'gone')
				FROM projection_checkpoints c WHERE c.position < $1 AND c.name NOT LIKE 'fanout:%'`, headAtFreeze, frozenBackend).Scan(&detail)
			t.Logf("sessions of the database:\n%s", sessionStates(pool))
			t.Fatalf("%s after SIGSTOP of the lease holder (mid-batch, backend %d): leases held %v (the standby is %d), %d of %d projections still before the head %d of the freeze (%s)",
				freezeBound, frozenBackend, leaseHolders(t, pool, "projection"), other, behind, projections, headAtFreeze, detail)
		}
		time.Sleep(50 * time.Millisecond)
	}
	moved := time.Since(frozen)
	// The head signer (an Exclusive) moves the same way when it ran there.
	for signer && leaseHolders(t, pool, "head signer")[other] != 1 {
		if time.Since(frozen) > freezeBound {
			t.Fatalf("%s after SIGSTOP, the head signer's lease is held %v; want %d", freezeBound, leaseHolders(t, pool, "head signer"), other)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The frozen batch's session is ended by the server (idle in its
	// transaction past BatchIdle) or, stuck mid-statement, by the new
	// holder about 1 s after it took the lease (projections' unstick): a
	// projection already past the head moves without it, so wait for it
	// within the bound.
	alive := true
	for alive {
		if err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, frozenBackend).Scan(&alive); err != nil {
			t.Fatal(err)
		}
		if alive && time.Since(frozen) > freezeBound {
			t.Logf("sessions of the database:\n%s", sessionStates(pool))
			t.Errorf("%s after SIGSTOP, the frozen batch's session (backend %d) is still open: it could commit when its process wakes", freezeBound, frozenBackend)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Wake the old holder under traffic: its batch fails, it holds no lease.
	time.Sleep(time.Second)
	if err := procs[holder].cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if h := leaseHolders(t, pool, "projection"); h[holder] != 0 || h[other] != projections {
		t.Errorf("after the old holder woke, leases are held %v; want all %d by %d", h, projections, other)
	}
	if h := leaseHolders(t, pool, "head signer"); signer && (h[holder] != 0 || h[other] != 1) {
		t.Errorf("after the old holder woke, the head signer's lease is held %v; want by %d", h, other)
	}
	if logs := procs[holder].logs.String(); !strings.Contains(logs, "leases lost") {
		t.Errorf("the woken holder did not report its leases lost; logs:\n%s", logs)
	}
	close(stop)
	wg.Wait()
	waitCaughtUp(t, pool, 60*time.Second)
	for _, p := range procs {
		p.stop(t)
	}

	var head, counted int64
	if err := pool.QueryRow(context.Background(), `SELECT (SELECT position FROM event_log_head), (SELECT sum(events) FROM rm_logstats.event_types)`).Scan(&head, &counted); err != nil {
		t.Fatal(err)
	}
	if counted != head {
		t.Fatalf("logstats counted %d events, the log holds %d", counted, head)
	}
	live := snapshot(t, pool)
	e.mustArr(nil, "projections", "rebuild", "all")
	for table, want := range snapshot(t, pool) {
		if live[table] != want {
			t.Errorf("%s after the freeze differs from a fresh rebuild", table)
		}
	}
	t.Logf("%d projections moved %s after SIGSTOP of their holder mid-batch (bound %s; head signer there too: %t), under write traffic; %d events, read models equal to a fresh rebuild",
		projections, moved.Round(time.Millisecond), freezeBound, signer, head)
}

// sessionStates describes every other session of pool's database: its
// state, what it waits for and on whom, for the reader of a failure.
func sessionStates(pool *pgxpool.Pool) string {
	var out string
	_ = pool.QueryRow(context.Background(), `SELECT coalesce(string_agg(format('%s backend %s: %s, waiting %s/%s, blocked by %s, transaction %s old, state %s old: %s',
		a.application_name, a.pid, a.state, a.wait_event_type, a.wait_event, pg_blocking_pids(a.pid), now() - a.xact_start, now() - a.state_change, left(a.query, 160)), E'\n'), '')
		FROM pg_stat_activity a WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()`).Scan(&out)
	return out
}
