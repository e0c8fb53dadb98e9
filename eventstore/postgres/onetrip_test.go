package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// An append takes one round trip once the writer knows the head: to a
// stream it wrote, to a new stream, with any expectation. When another
// process has moved the head or the stream, the append is still exact
// (a stale cache costs round trips, never correctness), and the writer
// is back to one round trip at the next append.
func TestAppendTakesOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	_, u := migratetest.NewPool(t)
	var rt migratetest.RoundTrips
	s := newStore(t, migratetest.TracedPool(t, u, &rt))
	other := newStore(t, migratetest.TracedPool(t, u, new(migratetest.RoundTrips)))

	appendOne := func(st *postgres.Store, stream string, ev eventstore.ExpectedVersion) (eventstore.AppendResult, int64, error) {
		before := rt.N()
		r, err := st.Append(ctx, stream, ev, newEvents(1)...)
		return r, rt.N() - before, err
	}
	if _, _, err := appendOne(s, "a", eventstore.NoStream()); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		stream   string
		expected eventstore.ExpectedVersion
		version  uint64
		position uint64
	}{
		{"a", eventstore.Exact(0), 1, 2},
		{"b", eventstore.NoStream(), 0, 3},
		{"a", eventstore.Any(), 2, 4},
		{"b", eventstore.StreamExists(), 1, 5},
	}
	for _, st := range steps {
		r, trips, err := appendOne(s, st.stream, st.expected)
		if err != nil {
			t.Fatalf("append to %s: %v", st.stream, err)
		}
		if r.FirstVersion != st.version || r.FirstPosition != st.position {
			t.Fatalf("append to %s: version %d at %d, want %d at %d", st.stream, r.FirstVersion, r.FirstPosition, st.version, st.position)
		}
		if trips != 1 {
			t.Fatalf("append to %s took %d round trips, want 1", st.stream, trips)
		}
	}

	// Another process appends to a: the cache is stale, expectations exact.
	if r, err := other.Append(ctx, "a", eventstore.Exact(2), newEvents(1)...); err != nil || r.FirstPosition != 6 {
		t.Fatalf("other process: %+v, %v", r, err)
	}
	var wrong *eventstore.WrongExpectedVersionError
	if _, _, err := appendOne(s, "a", eventstore.Exact(2)); !errors.As(err, &wrong) || wrong.Actual != 3 {
		t.Fatalf("append to a expecting 2 after another process wrote 3: %v", err)
	}
	evs := newEvents(1)
	r, _, err := appendOne(s, "a", eventstore.Exact(3))
	if err != nil || r.FirstVersion != 4 || r.FirstPosition != 7 {
		t.Fatalf("append to a expecting 3: %+v, %v", r, err)
	}
	// The retry of an append already in the log is found, not refused.
	r, err = s.Append(ctx, "c", eventstore.NoStream(), evs...)
	if err != nil || r.FirstPosition != 8 {
		t.Fatalf("append to c: %+v, %v", r, err)
	}
	_, trips, err := appendOne(s, "c", eventstore.Exact(0))
	if err != nil || trips != 1 {
		t.Fatalf("append to c after it: %v, %d round trips", err, trips)
	}
	r, err = s.Append(ctx, "c", eventstore.NoStream(), evs...)
	if err != nil || !r.Duplicate || r.FirstPosition != 8 {
		t.Fatalf("retry of the first append to c: %+v, %v", r, err)
	}
	checkStoreTree(t, s, 9)
}

// Two stores on one database (two processes, as far as PostgreSQL can
// tell), each with concurrent writers, append to shared streams (Any) and
// to their own (Exact): positions are 1..N without a gap, recorded times
// follow positions, every stream's versions are 0..n-1 in position order,
// every result matches the log, and the tree verifies.
func TestTwoStoresAppendConcurrently(t *testing.T) {
	const (
		writersPerStore = 8
		appendsPerW     = 150
		sharedStreams   = 4
	)
	ctx := context.Background()
	pool, u := migratetest.NewPool(t)
	stores := []*postgres.Store{newStore(t, pool), newStore(t, migratetest.TracedPool(t, u, new(migratetest.RoundTrips)))}
	var mu sync.Mutex
	results := map[uuid.UUID]eventstore.AppendResult{} // first event id -> result
	var wg sync.WaitGroup
	errs := make(chan error, len(stores)*writersPerStore)
	for si, s := range stores {
		for w := range writersPerStore {
			wg.Add(1)
			go func() {
				defer wg.Done()
				own := fmt.Sprintf("own-%d-%d", si, w)
				for i := range appendsPerW {
					stream, ev := own, eventstore.NoStream()
					if n := ownVersions(i); n > 0 {
						ev = eventstore.Exact(uint64(n - 1))
					}
					if i%3 == 1 {
						stream, ev = fmt.Sprintf("shared-%d", (w+i)%sharedStreams), eventstore.Any()
					}
					evs := newEvents(1 + i%3)
					r, err := s.Append(ctx, stream, ev, evs...)
					if err != nil {
						errs <- fmt.Errorf("store %d writer %d append %d to %s: %w", si, w, i, stream, err)
						return
					}
					mu.Lock()
					results[evs[0].ID] = r
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := checkLogAgainstResults(t, stores[0], results)
	checkStoreTree(t, stores[1], total)
}

// ownVersions is how many events a writer of TestTwoStoresAppendConcurrently
// has put in its own stream before its append i (appends i%3 == 1 go to a
// shared stream; append i carries 1 + i%3 events).
func ownVersions(i int) int {
	n := 0
	for j := range i {
		if j%3 != 1 {
			n += 1 + j%3
		}
	}
	return n
}

// checkLogAgainstResults reads the whole log and checks it against the
// appends' results; it returns the number of events.
func checkLogAgainstResults(t *testing.T, s *postgres.Store, results map[uuid.UUID]eventstore.AppendResult) uint64 {
	t.Helper()
	ctx := context.Background()
	versions := map[string]uint64{}
	var last eventstore.Event
	var n uint64
	for {
		evs, err := s.ReadAll(ctx, n, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			n++
			if e.Position != n {
				t.Fatalf("event %d of the log is at position %d", n, e.Position)
			}
			if e.StreamVersion != versions[e.StreamID] {
				t.Fatalf("position %d: %s version %d, want %d", n, e.StreamID, e.StreamVersion, versions[e.StreamID])
			}
			versions[e.StreamID]++
			if e.RecordedAt.Before(last.RecordedAt) {
				t.Fatalf("position %d recorded at %s, before position %d at %s", n, e.RecordedAt, last.Position, last.RecordedAt)
			}
			last = e
			if r, ok := results[e.ID]; ok && (r.FirstPosition != n || r.FirstVersion != e.StreamVersion || r.StreamID != e.StreamID) {
				t.Fatalf("position %d: the append's result says %+v", n, r)
			}
		}
	}
	var inLog int
	for id := range results {
		evs, err := s.ReadAll(ctx, results[id].FirstPosition-1, 1)
		if err != nil || len(evs) != 1 || evs[0].ID != id {
			t.Fatalf("the event of result %+v is not at its position", results[id])
		}
		inLog++
	}
	if inLog == 0 || n == 0 {
		t.Fatal("nothing appended")
	}
	return n
}
