package postgres_test

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// TestHeadIdleEndsAFrozenWriter: a writer that stops sending while its
// append's transaction holds the log head (here its BeforeCommit hook
// sleeps past HeadIdle, as a frozen process would; its statements are
// cached, as a long-running writer's are) has its session ended by the
// server after HeadIdle: a writer of another pool appends meanwhile, and
// the frozen append fails marked ErrNotAppended, with nothing of it in
// the log.
func TestHeadIdleEndsAFrozenWriter(t *testing.T) {
	pool, url := migratetest.NewPool(t)
	const idle = 500 * time.Millisecond
	var freeze atomic.Bool
	reached := make(chan struct{}, 1)
	frozen, err := postgres.New(pool, postgres.Config{HeadIdle: idle, BeforeCommit: func(ctx context.Context, _ int) error {
		if freeze.Load() {
			reached <- struct{}{}
			time.Sleep(4 * idle) // the process stopped with the head locked
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = frozen.Close() })
	otherPool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(otherPool.Close)
	other, err := postgres.New(otherPool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	ev := func() eventstore.NewEvent {
		return eventstore.NewEvent{ID: uuid.New(), Type: "Tested", SchemaVersion: 1, Data: []byte(`{}`)}
	}
	ctx := context.Background()
	for range 3 { // both paths once, statements cached
		if _, err := frozen.Append(ctx, "warm", eventstore.Any(), ev()); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Append(ctx, "warm", eventstore.Any(), ev()); err != nil {
			t.Fatal(err)
		}
	}

	freeze.Store(true)
	lost := ev()
	errc := make(chan error, 1)
	go func() { _, err := frozen.Append(ctx, "frozen", eventstore.Any(), lost); errc <- err }()
	<-reached
	start := time.Now()
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := other.Append(octx, "other", eventstore.Any(), ev()); err != nil {
		t.Fatalf("another writer's append while the frozen one holds the head: %v", err)
	}
	waited := time.Since(start)
	err = <-errc
	if !errors.Is(err, eventstore.ErrNotAppended) {
		t.Fatalf("the frozen writer's append: %v; want an error wrapping ErrNotAppended", err)
	}
	evs, rerr := other.ReadStream(ctx, "frozen", eventstore.ReadStreamOptions{})
	if rerr != nil {
		t.Fatal(rerr)
	}
	if len(evs) != 0 {
		t.Fatalf("the frozen writer's append is in the log: %v", evs)
	}
	t.Logf("another writer appended %s after the frozen one stopped (HeadIdle %s); the frozen append failed: %v", waited.Round(time.Millisecond), idle, err)
}

// blockingRows is a COPY source that sends one row, then nothing until
// release: a writer frozen in the middle of its COPY.
type blockingRows struct {
	sent    bool
	release chan struct{}
}

func (r *blockingRows) Read(p []byte) (int, error) {
	if !r.sent {
		r.sent = true
		return copy(p, "1\n"), nil
	}
	<-r.release
	return 0, io.EOF
}

// TestWriterEndsAHolderStuckMidCopy: a session that holds the log head and
// stops sending in the middle of a COPY (as a bulk append of a frozen
// process would) is not ended by idle_in_transaction_session_timeout (it
// is not idle); a writer waiting for the head finds it with no progress
// over HeadIdle and ends it, and appends.
func TestWriterEndsAHolderStuckMidCopy(t *testing.T) {
	pool, url := migratetest.NewPool(t)
	const idle = 500 * time.Millisecond
	st, err := postgres.New(pool, postgres.Config{HeadIdle: idle})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	stuck, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stuck.Close(context.Background()) })
	if _, err := stuck.Exec(ctx, `BEGIN; SET LOCAL idle_in_transaction_session_timeout = 500; SELECT 1 FROM event_log_head WHERE id FOR UPDATE; CREATE TEMP TABLE stuck (x int)`); err != nil {
		t.Fatal(err)
	}
	rows := &blockingRows{release: make(chan struct{})}
	copied, copyDone := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(copyDone)
		_, err := stuck.PgConn().CopyFrom(ctx, rows, `COPY stuck FROM STDIN`)
		copied <- err
	}()
	t.Cleanup(func() { close(rows.release); <-copyDone }) // before the connection closes

	start := time.Now()
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := st.Append(actx, "after-stuck", eventstore.Any(), eventstore.NewEvent{ID: uuid.New(), Type: "Tested", SchemaVersion: 1, Data: []byte(`{}`)}); err != nil {
		t.Fatalf("an append while a session holds the head stuck mid-COPY: %v", err)
	}
	waited := time.Since(start)
	select {
	case err := <-copied:
		if err == nil {
			t.Fatal("the stuck COPY succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stuck COPY did not fail once its session was ended")
	}
	t.Logf("an append waited %s behind a holder stuck mid-COPY (HeadIdle %s) before ending it", waited.Round(time.Millisecond), idle)
}
