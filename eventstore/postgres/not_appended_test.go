package postgres_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// TestAppendSaysWhenNothingWasAppended: an append rolled back before
// COMMIT was sent fails with an error wrapping eventstore.ErrNotAppended,
// and nothing of it is in the log; an append whose caller stopped waiting while it was in flight is
// not marked (it may commit, and here does).
func TestAppendSaysWhenNothingWasAppended(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	gate := make(chan struct{})
	reached := make(chan struct{}, 16)
	abort := errors.New("injected abort")
	var refuse atomic.Bool
	s, err := postgres.New(pool, postgres.Config{BeforeCommit: func(ctx context.Context, _ int) error {
		reached <- struct{}{}
		if refuse.Load() {
			return abort
		}
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ev := func() eventstore.NewEvent {
		return eventstore.NewEvent{ID: uuid.New(), Type: "Tested", SchemaVersion: 1, Data: []byte(`{}`)}
	}
	stream := func(id string) int {
		evs, err := s.ReadStream(context.Background(), id, eventstore.ReadStreamOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}

	// Rolled back before COMMIT: marked, not in the log.
	refuse.Store(true)
	if _, err := s.Append(context.Background(), "refused", eventstore.Any(), ev()); !errors.Is(err, eventstore.ErrNotAppended) || !errors.Is(err, abort) {
		t.Fatalf("an append rolled back before commit: %v", err)
	}
	<-reached
	if stream("refused") != 0 {
		t.Fatal("a refused append is in the log")
	}

	refuse.Store(false)

	// The caller stops waiting while the append is in flight: not marked,
	// and it commits once the database goes on.
	ctx, stop := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer stop()
	errc := make(chan error, 1)
	go func() { _, err := s.Append(ctx, "inflight", eventstore.Any(), ev()); errc <- err }()
	<-reached
	err = <-errc
	if err == nil || errors.Is(err, eventstore.ErrNotAppended) {
		t.Fatalf("an append given up in flight: %v, want an unmarked error", err)
	}
	close(gate)
	deadline := time.Now().Add(10 * time.Second)
	for stream("inflight") == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if stream("inflight") != 1 {
		t.Fatal("the append given up in flight did not commit once released")
	}
}
