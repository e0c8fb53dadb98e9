package main_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// leaseHolders counts, per process id, the leases of a kind its lease
// connection holds on pool's database (its application_name ends in
// host:pid).
func leaseHolders(t testing.TB, pool *pgxpool.Pool, what string) map[int]int {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT a.application_name, count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND a.application_name LIKE 'arr ' || $1 || ' leases %' GROUP BY 1`, what)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int]int{}
	for rows.Next() {
		var app string
		var n int
		if err := rows.Scan(&app, &n); err != nil {
			t.Fatal(err)
		}
		var pid int
		if _, err := fmt.Sscanf(app[strings.LastIndex(app, ":")+1:], "%d", &pid); err != nil {
			t.Fatalf("application_name %q: %v", app, err)
		}
		out[pid] = n
	}
	return out
}

// TestProjectionsMoveOnKill: two `arr serve projections` processes share
// the work by leases: one follows every projection (and signs the log's
// heads) while the other stands by. kill -9 of the one that works moves
// every projection to the other within the lease bound, events keep being
// applied, and the read models end equal to a fresh rebuild: no event
// applied twice, none skipped.
func TestProjectionsMoveOnKill(t *testing.T) {
	e := newEnv(t)
	e.createAccount("seed@example.com", "free") // sets the read models up
	pool, st := openStore(t, e.dbURL)
	var projections int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM projection_checkpoints WHERE name NOT LIKE 'fanout:%'`).Scan(&projections); err != nil {
		t.Fatal(err)
	}
	// The first process takes every lease before the second starts (two
	// that start together may share them), then the second stands by.
	p1 := e.start("serve", "projections")
	holder := p1.cmd.Process.Pid
	for deadline := time.Now().Add(60 * time.Second); leaseHolders(t, pool, "projection")[holder] != projections; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the first process does not hold all %d projection leases: %v", projections, leaseHolders(t, pool, "projection"))
		}
	}
	p2 := e.start("serve", "projections")
	pids := map[int]*proc{p1.cmd.Process.Pid: p1, p2.cmd.Process.Pid: p2}
	time.Sleep(time.Second) // the standby is up, and takes nothing
	if h := leaseHolders(t, pool, "projection"); len(h) != 1 || h[holder] != projections {
		t.Fatalf("leases held by %v; want all %d by the first process, %d", h, projections, holder)
	}
	stop := make(chan struct{})
	wg := writeTraffic(t, st, stop, 2)
	time.Sleep(2 * time.Second)
	pids[holder].kill()
	killed := time.Now()
	var other int
	for pid := range pids {
		if pid != holder {
			other = pid
		}
	}
	for deadline := time.Now().Add(60 * time.Second); leaseHolders(t, pool, "projection")[other] != projections; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the leases did not move to the other process: %v", leaseHolders(t, pool, "projection"))
		}
	}
	moved := time.Since(killed)
	for deadline := time.Now().Add(60 * time.Second); leaseHolders(t, pool, "head signer")[other] != 1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the head signer's lease did not move: %v", leaseHolders(t, pool, "head signer"))
		}
	}
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	waitCaughtUp(t, pool, 60*time.Second)
	pids[other].stop(t)

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
			t.Errorf("%s after the move differs from a fresh rebuild", table)
		}
	}
	t.Logf("%d projections moved %s after kill -9 of their process, under write traffic; %d events, read models equal to a fresh rebuild",
		projections, moved.Round(time.Millisecond), head)
}
