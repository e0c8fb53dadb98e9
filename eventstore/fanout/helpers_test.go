package fanout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

const waitLimit = 60 * time.Second

func testLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// newStore gives the test its own migrated database and a PostgreSQL store.
func newStore(t testing.TB) (*pgxpool.Pool, *postgres.Store) {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	s, err := postgres.New(pool, postgres.Config{PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("new store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return pool, s
}

func newEvents(n int, stream string) []eventstore.NewEvent {
	out := make([]eventstore.NewEvent, n)
	for i := range out {
		out[i] = eventstore.NewEvent{
			ID: uuid.New(), Type: "TestHappened", SchemaVersion: 1,
			Data:     json.RawMessage(fmt.Sprintf(`{"stream":%q,"i":%d}`, stream, i)),
			Metadata: eventstore.Metadata{CorrelationID: "corr-" + stream},
		}
	}
	return out
}

// appendBulk writes perStream events to each of streams in one AppendBulk.
func appendBulk(t testing.TB, s eventstore.Store, prefix string, streams, perStream int) {
	t.Helper()
	appends := make([]eventstore.Append, streams)
	for i := range appends {
		id := fmt.Sprintf("%s-bulk-%d", prefix, i)
		appends[i] = eventstore.Append{StreamID: id, Expected: eventstore.Any(), Events: newEvents(perStream, id)}
	}
	if _, err := s.AppendBulk(context.Background(), appends); err != nil {
		t.Fatalf("bulk append: %v", err)
	}
}

// appendConcurrently has `writers` goroutines each append `chunks` appends
// of `size` events to their own stream, so that commits interleave.
func appendConcurrently(t testing.TB, s eventstore.Store, prefix string, writers, chunks, size int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("%s-live-%d", prefix, w)
			for range chunks {
				if _, err := s.Append(context.Background(), id, eventstore.Any(), newEvents(size, id)...); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("append: %v", err)
	}
}

// seed writes 2,000 events across 12 streams: 1,000 by AppendBulk, 1,000 by
// concurrent appends.
func seed(t testing.TB, s eventstore.Store) {
	t.Helper()
	appendBulk(t, s, "seed", 8, 125)
	appendConcurrently(t, s, "seed", 4, 25, 10)
}

// readLog returns the whole log in position order.
func readLog(t testing.TB, s eventstore.Store) []eventstore.Event {
	t.Helper()
	var out []eventstore.Event
	var after uint64
	for {
		evs, err := s.ReadAll(context.Background(), after, eventstore.DefaultBatch)
		if err != nil {
			t.Fatalf("reading log: %v", err)
		}
		if len(evs) == 0 {
			return out
		}
		out = append(out, evs...)
		after = evs[len(evs)-1].Position
	}
}

// checkpointOf reads a forwarder's saved position.
func checkpointOf(t testing.TB, pool *pgxpool.Pool, name string) uint64 {
	t.Helper()
	var pos int64
	err := pool.QueryRow(context.Background(),
		`SELECT position FROM projection_checkpoints WHERE name = $1`, "fanout:"+name).Scan(&pos)
	if err != nil {
		t.Fatalf("reading checkpoint fanout:%s: %v", name, err)
	}
	return uint64(pos)
}

// waitCheckpoint waits until a forwarder's checkpoint reaches pos.
func waitCheckpoint(t testing.TB, pool *pgxpool.Pool, name string, pos uint64) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		var got int64
		err := pool.QueryRow(context.Background(),
			`SELECT position FROM projection_checkpoints WHERE name = $1`, "fanout:"+name).Scan(&got)
		if err == nil && uint64(got) >= pos {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("checkpoint fanout:%s at %d (err %v), want %d within %s", name, got, err, pos, waitLimit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
