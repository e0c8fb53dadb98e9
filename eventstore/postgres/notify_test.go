package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// TestNotificationsAreWakeUpsOnly: a NOTIFY on the log's channel with a
// payload past the head (anyone who can connect may send one) wakes the
// waiters, which then read the head from the database: nobody is told
// the log passed a position it has not reached. A real append still wakes
// them at once.
func TestNotificationsAreWakeUpsOnly(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	s, err := postgres.New(pool, postgres.Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	head, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wait := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return s.WaitForEvents(ctx, head)
	}
	// The first wait starts the listener.
	if err := wait(300 * time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait on a quiet log: %v", err)
	}
	for _, payload := range []string{"18446744073709551615", "9223372036854775807", "x", ""} {
		if _, err := pool.Exec(ctx, `SELECT pg_notify('arr_events', $1)`, payload); err != nil {
			t.Fatal(err)
		}
		if err := wait(500 * time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("after NOTIFY %q: WaitForEvents returned %v on a log that did not move", payload, err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- wait(30 * time.Second) }()
	time.Sleep(100 * time.Millisecond)
	if _, err := s.Append(ctx, "notify", eventstore.Any(), eventstore.NewEvent{ID: uuid.New(), Type: "T", SchemaVersion: 1, Data: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("wait across an append: %v", err)
	}
}
