package postgres_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
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
