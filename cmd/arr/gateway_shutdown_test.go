package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// TestGatewayShutdownWithinGraceOnAStuckStore: while a completion's audit
// append waits on a store that does not answer (the events table locked by
// another connection), SIGTERM stops arr within ARR_SHUTDOWN_GRACE; the
// client is not told the completion succeeded, and once the store answers
// again the chain does not hold it.
func TestGatewayShutdownWithinGraceOnAStuckStore(t *testing.T) {
	const grace = 3 * time.Second
	g := newGateway(t, "enterprise", "ARR_SHUTDOWN_GRACE="+grace.String(), "ARR_LOG_LEVEL=info")
	if status, _, _ := g.chat(t, map[string]any{"messages": userMsg("Say hello")}); status != http.StatusOK {
		t.Fatalf("first completion: %d", status)
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, g.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	count := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE stream_id = 'auditchain'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()

	// A real store that does not answer: the events table locked.
	lock, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Rollback(ctx) }()
	if _, err := lock.Exec(ctx, `LOCK TABLE events IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		status int
		err    error
	}
	res := make(chan result, 1)
	go func() {
		body, _ := json.Marshal(map[string]any{"messages": userMsg("Say goodbye")})
		req, _ := http.NewRequest(http.MethodPost, g.gateway+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+g.key)
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			res <- result{err: err}
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		res <- result{status: resp.StatusCode}
	}()
	time.Sleep(500 * time.Millisecond) // the completion is upstream and waiting on its append
	start := time.Now()
	if err := g.proc.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.proc.done:
	case <-time.After(grace + 5*time.Second):
		_ = g.proc.cmd.Process.Signal(syscall.SIGQUIT) // its goroutines, in the logs below
		<-g.proc.done
		t.Fatalf("arr still running %s after SIGTERM with ARR_SHUTDOWN_GRACE=%s; logs:\n%s", time.Since(start), grace, g.proc.logs.String())
	}
	took := time.Since(start)
	if took > grace+time.Second {
		t.Errorf("arr took %s to stop with ARR_SHUTDOWN_GRACE=%s", took, grace)
	}
	r := <-res
	if r.err == nil && r.status == http.StatusOK {
		t.Fatalf("the client was told the completion succeeded")
	}
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if after := count(); after != before {
		t.Fatalf("the chain holds %d entries after the stuck completion, want %d (the client got %+v)", after, before, r)
	}
	t.Logf("stopped in %s; the client got %+v", took, r)
}
