package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// logFreezeDeadline is the generous deadline for the log to move again
// after a writer froze holding its head: the store's HeadIdle
// (postgres.DefaultHeadIdle, 3 s) with wide margin for a loaded machine.
const logFreezeDeadline = 10 * time.Second

// headHolder returns the backend of name's sessions that is idle in its
// transaction holding the log head's row (a commit's SELECT … FOR
// UPDATE takes RowShareLock on event_log_head), or 0.
func headHolder(t testing.TB, pool *pgxpool.Pool, name string) int {
	t.Helper()
	var pid int
	err := pool.QueryRow(context.Background(), `SELECT coalesce(min(a.pid), 0) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE a.application_name = $1 AND a.state = 'idle in transaction' AND l.locktype = 'relation' AND l.granted
		AND l.relation = 'public.event_log_head'::regclass AND l.mode = 'RowShareLock'`, name).Scan(&pid)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// headLocked says whether the log head's row is locked by someone: a
// FOR UPDATE NOWAIT of it fails with lock_not_available.
func headLocked(t testing.TB, pool *pgxpool.Pool) bool {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	_, err = tx.Exec(ctx, `SELECT 1 FROM event_log_head WHERE id FOR UPDATE NOWAIT`)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "55P03" {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

// TestLogMovesOnFrozenWriter: a second arr process (the CLI creating an
// account) is frozen (SIGSTOP) in the middle of its append, its
// transaction idle holding the log head's row lock, which orders every
// writer of every process. The server ends that transaction within the
// store's bound, so `arr up` keeps appending (its gateway completions,
// each an audit entry, are answered) while the other process is still
// stopped; woken (SIGCONT), the frozen append fails, nothing of it is in
// the log, and the log verifies: positions 1..head without a gap or a
// duplicate, its tree and the audit chain intact.
func TestLogMovesOnFrozenWriter(t *testing.T) {
	g := newGateway(t, "enterprise")
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, g.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	body, _ := json.Marshal(map[string]any{"messages": userMsg("Say hello")})
	client := &http.Client{Timeout: logFreezeDeadline}
	complete := func() (int, time.Duration, error) {
		req, _ := http.NewRequest(http.MethodPost, g.gateway+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+g.key)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, time.Since(start), err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start), nil
	}
	if code, _, err := complete(); err != nil || code != http.StatusOK {
		t.Fatalf("a completion before the freeze: %d %v", code, err)
	}

	// Hold the head lock, so that the other process's append waits for it
	// with its first statements sent; stop the process there, then let
	// the lock go: the server grants it to the stopped process's
	// transaction, which then sits idle in it, holding the head.
	const name = "arr-frozen-writer"
	u, err := url.Parse(g.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	hold, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Exec(ctx, `SELECT 1 FROM event_log_head WHERE id FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "accounts", "create", "--email", "frozen@example.com", "--plan", "free", "--json")
	cmd.Env = append(slices.Clone(g.environ()), "DATABASE_URL="+u.String())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var exitErr error
	exited := make(chan struct{})
	go func() { exitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		// Its lockHead statement waits for the lock, behind ours (and
		// maybe behind an append of `arr up` queued before it).
		var waiting bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'
			AND query LIKE '%FROM event_log_head WHERE id FOR UPDATE%' AND cardinality(pg_blocking_pids(pid)) > 0)`, name).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the CLI's append never waited for the head lock; stderr:\n%s", errb.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	var frozenBackend int
	for frozenBackend == 0 {
		if frozenBackend = headHolder(t, pool, name); frozenBackend == 0 && time.Since(frozen) > 2*time.Second {
			t.Fatal("the stopped process's transaction did not take the head lock")
		}
	}
	if !headLocked(t, pool) {
		t.Fatal("the head is not locked while the stopped process's transaction holds it")
	}
	var head0 int64
	if err := pool.QueryRow(ctx, `SELECT position FROM event_log_head`).Scan(&head0); err != nil {
		t.Fatal(err)
	}

	// `arr up` goes on appending while the other process is stopped.
	var stall time.Duration
	answered := 0
	for time.Since(frozen) < logFreezeDeadline/2 {
		code, took, err := complete()
		if err != nil || code != http.StatusOK {
			t.Fatalf("%s after the freeze (backend %d idle holding the log head), a completion took %s: %d %v; the log is stalled",
				time.Since(frozen).Round(time.Millisecond), frozenBackend, took.Round(time.Millisecond), code, err)
		}
		if answered == 0 {
			stall = time.Since(frozen)
		}
		answered++
	}
	var alive bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, frozenBackend).Scan(&alive); err != nil {
		t.Fatal(err)
	}
	if alive {
		t.Errorf("the frozen writer's session (backend %d) is still open: it could commit when its process wakes", frozenBackend)
	}

	// Woken, the frozen append fails and leaves nothing in the log.
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	woke := time.Now()
	var exitedAt time.Time
	select {
	case <-exited:
		exitedAt = time.Now()
	case <-time.After(30 * time.Second):
		t.Fatalf("the woken CLI did not exit; stderr:\n%s", errb.String())
	}
	var created int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE event_type = 'AccountCreated' AND data::text LIKE '%frozen@example.com%'`).Scan(&created); err != nil {
		t.Fatal(err)
	}
	if exitErr == nil || created != 0 {
		t.Errorf("the woken CLI: exit %v, %d AccountCreated events of its account in the log (want a failure and none)\nstdout: %s\nstderr: %s", exitErr, created, out.String(), errb.String())
	}

	// The log: positions 1..head, each once, its tree intact; the chain too.
	var n, lo, hi, head int64
	if err := pool.QueryRow(ctx, `SELECT count(*), coalesce(min(position), 0), coalesce(max(position), 0), (SELECT position FROM event_log_head) FROM events`).Scan(&n, &lo, &hi, &head); err != nil {
		t.Fatal(err)
	}
	if n != head || lo != 1 || hi != head || head < head0+int64(answered) {
		t.Fatalf("the log holds %d events at positions %d..%d, head %d (%d before the freeze, %d completions since)", n, lo, hi, head, head0, answered)
	}
	var rep verifyOut
	g.mustArr(&rep, "events", "verify", "--allow-unsigned", "--json")
	if !rep.Report.OK || rep.Report.Checked < uint64(head) {
		t.Fatalf("events verify: %+v, want OK over %d events", rep.Report, head)
	}
	g.mustArr(nil, "audit", "verify", "--json")
	t.Logf("frozen writer (backend %d) held the log head; `arr up` answered its first completion %s after the freeze, %d in all while the writer was stopped; the woken CLI failed within %s (%v: %s) and the log of %d events verifies",
		frozenBackend, stall.Round(time.Millisecond), answered, exitedAt.Sub(woke).Round(time.Millisecond), exitErr, strings.TrimSpace(errb.String()), head)
}
