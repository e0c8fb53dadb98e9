package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// The gap test: many Store instances, each on its own pool (so, as far as
// PostgreSQL can tell, separate processes), append concurrently while some
// transactions are held open before COMMIT and some are rolled back, and a
// subscriber on yet another Store tails the log from position 0. The
// subscriber must see every committed event exactly once, at positions
// 1..N with no gap, and no rolled-back event.
//
// Most stores inject faults through Config.BeforeCommit; gapPlainStores of
// them have no hook, so the path that sends COMMIT in the same round trip
// as the writes competes for the head lock too.
const (
	gapStores           = 8
	gapPlainStores      = 2 // of gapStores, without a BeforeCommit hook
	gapWritersPerStore  = 8
	gapEvents           = 100_000 // events committed in all
	gapRollbackPercent  = 3       // of hooked append transactions
	gapHoldPercent      = 5       // of hooked append transactions, held 0-20 ms
	gapMaxHold          = 20 * time.Millisecond
	gapSharedStreams    = 64 // appended to by every writer with Any()
	gapOwnStreams       = 8  // per writer, appended to with Exact()
	gapMaxEventsPerCall = 5
	gapCatchUpTimeout   = 60 * time.Second
)

var errInjectedRollback = errors.New("injected rollback")

// gapOtherType is the type of about a quarter of the appends; a second
// tailer reads the log for it alone (ReadAllOfTypes).
const gapOtherType = "GapOtherType"

// tailType reads the log for one event type with ReadAllOfTypes until it
// has covered `total` positions, checking order and coverage as it goes.
func tailType(ctx context.Context, s *postgres.Store, total uint64) (map[uuid.UUID]uint64, error) {
	seen := map[uuid.UUID]uint64{}
	var upTo, last uint64
	for upTo < total {
		evs, to, err := s.ReadAllOfTypes(ctx, upTo, 500, []string{gapOtherType})
		if err != nil {
			return nil, err
		}
		if to < upTo {
			return nil, fmt.Errorf("read after %d covered only up to %d", upTo, to)
		}
		for _, e := range evs {
			if e.Type != gapOtherType || e.Position <= last || e.Position > to {
				return nil, fmt.Errorf("typed read after %d (to %d) returned %s at %d after %d", upTo, to, e.Type, e.Position, last)
			}
			last = e.Position
			seen[e.ID] = e.Position
		}
		upTo = to
		if len(evs) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	return seen, nil
}

// gapFaults counts what the BeforeCommit hooks did.
type gapFaults struct {
	commits, held, rolledBack atomic.Int64
}

func (f *gapFaults) beforeCommit(ctx context.Context, _ int) error {
	f.commits.Add(1)
	r := rand.IntN(100)
	switch {
	case r < gapRollbackPercent:
		f.rolledBack.Add(1)
		return errInjectedRollback
	case r < gapRollbackPercent+gapHoldPercent:
		f.held.Add(1)
		time.Sleep(rand.N(gapMaxHold))
	}
	return nil
}

// committedEvent is what a writer learned from a successful append.
type committedEvent struct {
	stream   string
	position uint64
	version  uint64
}

type gapLedger struct {
	mu         sync.Mutex
	committed  map[uuid.UUID]committedEvent
	rolledBack map[uuid.UUID]struct{}
}

func TestGapFreeUnderConcurrentWritersAndRollbacks(t *testing.T) {
	if testing.Short() {
		t.Skip("gap test appends 100,000 events to PostgreSQL; skipped with -short")
	}
	start := time.Now()
	_, url := migratetest.NewPool(t)
	faults := &gapFaults{}

	newStore := func(maxConns int, cfg postgres.Config) *postgres.Store {
		t.Helper()
		pc, err := pgxpool.ParseConfig(url)
		if err != nil {
			t.Fatalf("parsing %s: %v", url, err)
		}
		pc.MaxConns = int32(maxConns)
		pool, err := pgxpool.NewWithConfig(context.Background(), pc)
		if err != nil {
			t.Fatalf("connecting: %v", err)
		}
		s, err := postgres.New(pool, cfg)
		if err != nil {
			t.Fatalf("new store: %v", err)
		}
		t.Cleanup(func() { s.Close(); pool.Close() })
		return s
	}
	stores := make([]*postgres.Store, gapStores)
	for i := range stores {
		cfg := postgres.Config{BeforeCommit: faults.beforeCommit}
		if i < gapPlainStores {
			cfg.BeforeCommit = nil
		}
		stores[i] = newStore(2, cfg)
	}
	reader := newStore(4, postgres.Config{PollInterval: 500 * time.Millisecond})

	// The subscriber runs from the start.
	sub := &gapSubscriber{seen: make(map[uuid.UUID]uint64, gapEvents)}
	subCtx, stopSub := context.WithCancel(context.Background())
	defer stopSub()
	subDone := make(chan error, 1)
	go func() { subDone <- reader.Subscribe(subCtx, 0, sub.handle) }()
	type typedResult struct {
		seen map[uuid.UUID]uint64
		err  error
	}
	typedDone := make(chan typedResult, 1)
	// The typed tailer has a context of its own: the subscription's ends as
	// soon as the subscriber has caught up, which may be before the tailer
	// has (it failed that way on a loaded machine).
	typedCtx, stopTyped := context.WithCancel(context.Background())
	defer stopTyped()
	go func() {
		seen, err := tailType(typedCtx, reader, gapEvents)
		typedDone <- typedResult{seen, err}
	}()

	// The writers share a budget of events to commit; a rolled-back append
	// is retried with fresh event ids, so exactly gapEvents commit.
	ledger := &gapLedger{committed: make(map[uuid.UUID]committedEvent, gapEvents), rolledBack: map[uuid.UUID]struct{}{}}
	var budget atomic.Int64
	budget.Store(gapEvents)
	var wg sync.WaitGroup
	for w := 0; w < gapStores*gapWritersPerStore; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := gapWriter(stores[w%gapStores], w, &budget, ledger); err != nil {
				t.Errorf("writer %d: %v", w, err)
			}
		}()
	}
	wg.Wait()
	wrote := time.Since(start)
	if t.Failed() {
		t.FailNow()
	}
	if n := len(ledger.committed); n != gapEvents {
		t.Fatalf("writers committed %d events, want %d", n, gapEvents)
	}

	// The subscriber must catch up to exactly gapEvents and stop.
	deadline := time.After(gapCatchUpTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-tick.C:
			if sub.last.Load() >= gapEvents {
				break wait
			}
		case err := <-subDone:
			t.Fatalf("subscription ended early at position %d: %v", sub.last.Load(), err)
		case <-deadline:
			t.Fatalf("subscriber reached position %d of %d within %s", sub.last.Load(), gapEvents, gapCatchUpTimeout)
		}
	}
	stopSub()
	select {
	case err := <-subDone:
		if err != nil {
			t.Fatalf("subscription: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("subscription did not return after its context ended")
	}
	caughtUp := time.Since(start)
	if sub.err != nil {
		t.Fatal(sub.err)
	}
	checkAgainstLedger(t, "subscriber", sub.seen, ledger)

	// After the fact, the whole log must equal the committed set.
	ctx := context.Background()
	head, err := reader.Head(ctx)
	if err != nil {
		t.Fatalf("head: %v", err)
	}
	if head != gapEvents {
		t.Fatalf("head = %d, want %d", head, gapEvents)
	}
	logged := make(map[uuid.UUID]uint64, gapEvents)
	otherIDs := map[uuid.UUID]bool{}
	streamNext := map[string]uint64{}
	var pos uint64
	for {
		evs, err := reader.ReadAll(ctx, pos, 5000)
		if err != nil {
			t.Fatalf("read all after %d: %v", pos, err)
		}
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			if e.Position != pos+1 {
				t.Fatalf("ReadAll: position %d follows %d", e.Position, pos)
			}
			pos = e.Position
			if e.StreamVersion != streamNext[e.StreamID] {
				t.Fatalf("ReadAll: %s version %d at position %d, want %d", e.StreamID, e.StreamVersion, e.Position, streamNext[e.StreamID])
			}
			streamNext[e.StreamID]++
			logged[e.ID] = e.Position
			if e.Type == gapOtherType {
				otherIDs[e.ID] = true
			}
		}
	}
	checkAgainstLedger(t, "ReadAll", logged, ledger)
	// The Merkle tree the stores extended, each under the head lock and
	// some in transactions rolled back, is the tree of the log's events.
	checkStoreTree(t, reader, gapEvents)

	// The typed tailer saw exactly the log's events of its type, in order.
	var typed typedResult
	select {
	case typed = <-typedDone:
	case <-time.After(gapCatchUpTimeout):
		t.Fatal("the typed tailer did not cover the log")
	}
	if typed.err != nil {
		t.Fatalf("typed tailer: %v", typed.err)
	}
	var others int
	for id, p := range logged {
		if otherIDs[id] {
			others++
			if typed.seen[id] != p {
				t.Fatalf("typed tailer: %s event %s at position %d seen at %d", gapOtherType, id, p, typed.seen[id])
			}
		}
	}
	if others == 0 || len(typed.seen) != others {
		t.Fatalf("typed tailer saw %d %s events, the log holds %d", len(typed.seen), gapOtherType, others)
	}

	t.Logf("typed tailer: %d %s events, all in order", len(typed.seen), gapOtherType)
	t.Logf("%d events across %d stores; %d append transactions on the %d hooked stores, %d held open, %d rolled back; writers took %s, subscriber caught up at %s",
		gapEvents, gapStores, faults.commits.Load(), gapStores-gapPlainStores, faults.held.Load(), faults.rolledBack.Load(),
		wrote.Round(time.Millisecond), caughtUp.Round(time.Millisecond))
	if faults.rolledBack.Load() == 0 || faults.held.Load() == 0 {
		t.Fatalf("no fault was injected (held %d, rolled back %d)", faults.held.Load(), faults.rolledBack.Load())
	}
}

// gapWriter appends until the shared budget is spent: single events and
// small multi-event appends, half to shared streams under Any(), half to its
// own streams under Exact().
func gapWriter(s *postgres.Store, w int, budget *atomic.Int64, l *gapLedger) error {
	ctx := context.Background() // never cancelled: an append whose ctx ends may still commit
	own := make([]int64, gapOwnStreams)
	for i := range own {
		own[i] = -1
	}
	for seq := 0; ; seq++ {
		n := 1
		if rand.IntN(3) == 0 {
			n = 2 + rand.IntN(gapMaxEventsPerCall-1)
		}
		if left := budget.Add(-int64(n)); left < 0 {
			n += int(left)
			if n <= 0 {
				return nil
			}
		}
		var stream string
		var expected eventstore.ExpectedVersion
		ownIdx := -1
		if rand.IntN(2) == 0 {
			stream, expected = fmt.Sprintf("gap-shared-%d", rand.IntN(gapSharedStreams)), eventstore.Any()
		} else {
			ownIdx = rand.IntN(gapOwnStreams)
			stream, expected = fmt.Sprintf("gap-w%d-%d", w, ownIdx), eventstore.AfterVersion(own[ownIdx])
		}
		typ := "GapTested"
		if rand.IntN(4) == 0 {
			typ = gapOtherType // what the typed tailer reads
		}
		for attempt := 0; ; attempt++ {
			evs := make([]eventstore.NewEvent, n)
			for i := range evs {
				data, _ := json.Marshal(map[string]int{"writer": w, "seq": seq, "i": i, "attempt": attempt})
				evs[i] = eventstore.NewEvent{ID: uuid.New(), Type: typ, SchemaVersion: 1, Data: data}
			}
			res, err := s.Append(ctx, stream, expected, evs...)
			if errors.Is(err, errInjectedRollback) {
				l.mu.Lock()
				for _, e := range evs {
					l.rolledBack[e.ID] = struct{}{}
				}
				l.mu.Unlock()
				continue
			}
			if err != nil {
				return fmt.Errorf("append %d to %s: %w", seq, stream, err)
			}
			if res.Duplicate || res.LastPosition-res.FirstPosition+1 != uint64(n) || res.LastVersion-res.FirstVersion+1 != uint64(n) {
				return fmt.Errorf("append %d of %d events to %s: result %+v", seq, n, stream, res)
			}
			l.mu.Lock()
			for i, e := range evs {
				l.committed[e.ID] = committedEvent{stream: stream, position: res.FirstPosition + uint64(i), version: res.FirstVersion + uint64(i)}
			}
			l.mu.Unlock()
			if ownIdx >= 0 {
				own[ownIdx] = int64(res.LastVersion)
			}
			break
		}
	}
}

// gapSubscriber checks, as events arrive, that positions run 1, 2, 3, ...
// and that no event id comes twice.
type gapSubscriber struct {
	last atomic.Uint64
	seen map[uuid.UUID]uint64 // only the subscription goroutine writes it
	err  error
}

func (g *gapSubscriber) handle(_ context.Context, evs []eventstore.Event) error {
	last := g.last.Load()
	for _, e := range evs {
		if e.Position != last+1 {
			g.err = fmt.Errorf("subscriber got position %d after %d", e.Position, last)
			return g.err
		}
		if p, dup := g.seen[e.ID]; dup {
			g.err = fmt.Errorf("subscriber got event %s twice, at %d and %d", e.ID, p, e.Position)
			return g.err
		}
		g.seen[e.ID] = e.Position
		last = e.Position
	}
	g.last.Store(last)
	return nil
}

// checkAgainstLedger compares what a reader saw (event id -> position) with
// what the writers were told.
func checkAgainstLedger(t *testing.T, who string, got map[uuid.UUID]uint64, l *gapLedger) {
	t.Helper()
	if len(got) != len(l.committed) {
		t.Errorf("%s saw %d events, writers committed %d", who, len(got), len(l.committed))
	}
	bad := 0
	for id, c := range l.committed {
		p, ok := got[id]
		switch {
		case !ok:
			t.Errorf("%s never saw committed event %s (%s@%d, position %d)", who, id, c.stream, c.version, c.position)
		case p != c.position:
			t.Errorf("%s saw event %s at position %d, its append said %d", who, id, p, c.position)
		default:
			continue
		}
		if bad++; bad == 10 {
			t.FailNow()
		}
	}
	for id := range l.rolledBack {
		if p, ok := got[id]; ok {
			t.Errorf("%s saw rolled-back event %s at position %d", who, id, p)
			if bad++; bad == 10 {
				t.FailNow()
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}
