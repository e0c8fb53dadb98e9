package commands_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// gate makes a real PostgreSQL store slow: every append waits inside its
// transaction, just before COMMIT (the log's head row locked), until the
// gate is released; or, refusing, rolls back there.
type gate struct {
	open    chan struct{}
	once    sync.Once
	reached chan struct{} // one signal per append that reached the gate
	calls   atomic.Int64
	refuse  atomic.Bool
}

var errRefused = errors.New("refused by the test")

func (g *gate) beforeCommit(ctx context.Context, _ int) error {
	g.calls.Add(1)
	select {
	case g.reached <- struct{}{}:
	default:
	}
	if g.refuse.Load() {
		return errRefused
	}
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// slowChain is an audit chain on a real PostgreSQL store behind a gate.
func slowChain(t *testing.T, cfg commands.AuditChainConfig) (*commands.AuditChain, *gate, eventstore.Store) {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	g := &gate{open: make(chan struct{}), reached: make(chan struct{}, 64)}
	st, err := postgres.New(pool, postgres.Config{BeforeCommit: g.beforeCommit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	t.Cleanup(g.release) // runs first: nothing stays held at the end
	chain, err := commands.NewAuditChain(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return chain, g, st
}

// run runs the chain until the test ends (or stop is called) and returns
// stop, which waits for Run to return.
func run(t *testing.T, chain *commands.AuditChain) (stop func(), done <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := make(chan struct{})
	go func() { defer close(d); _ = chain.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-d })
	return cancel, d
}

type recordResult struct {
	rec commands.Recorded
	err error
}

// record records a completion named by its request id in the background.
func record(ctx context.Context, chain *commands.AuditChain, requestID string) <-chan recordResult {
	out := make(chan recordResult, 1)
	go func() {
		rec, err := chain.Record(ctx, completion(requestID))
		out <- recordResult{rec, err}
	}()
	return out
}

func completion(requestID string) commands.RecordCompletion {
	return commands.RecordCompletion{Metadata: eventstore.Metadata{RequestID: requestID}, Completion: audit.Completion{
		AccountID: uuid.New(), KeyID: uuid.New(), RequestID: requestID, Tier: "nano", Model: "m", Outcome: "ok", Attempts: 1,
		StartedAt: time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC),
	}}
}

// chainEntries returns the request ids and hashes of the chain's entries,
// in order.
func chainEntries(t *testing.T, st eventstore.Store) (ids, hashes []string) {
	t.Helper()
	evs, err := st.ReadStream(context.Background(), audit.StreamID, eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		var e audit.CompletionRecorded
		var c audit.Completion
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(e.Payload, &c); err != nil {
			t.Fatal(err)
		}
		ids, hashes = append(ids, c.RequestID), append(hashes, e.Hash)
	}
	return ids, hashes
}

func within(t *testing.T, d time.Duration, what string, c <-chan recordResult) recordResult {
	t.Helper()
	select {
	case r := <-c:
		return r
	case <-time.After(d):
		t.Fatalf("%s: no result within %s", what, d)
		return recordResult{}
	}
}

// notRecorded fails unless err says the completion is not in the chain.
func notRecorded(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || !errors.Is(err, domain.ErrUnavailable) || errors.Is(err, commands.ErrOutcomeUnknown) {
		t.Fatalf("%s: %v, want an error wrapping domain.ErrUnavailable (not recorded)", what, err)
	}
}

// TestAuditChainWithdrawsAnEntryNotYetSent: while the store is slow, an
// entry still queued when its caller's wait ends is withdrawn: Record
// fails, and the entry never reaches the chain, even after the store
// goes on.
func TestAuditChainWithdrawsAnEntryNotYetSent(t *testing.T) {
	chain, g, st := slowChain(t, commands.AuditChainConfig{AppendTimeout: time.Minute})
	run(t, chain)
	a := record(context.Background(), chain, "a")
	<-g.reached // a is in its transaction, held before COMMIT
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := chain.Record(ctx, completion("b"))
	notRecorded(t, "b, queued behind a when its wait ended", err)

	g.release()
	ra := within(t, 30*time.Second, "a", a)
	if ra.err != nil {
		t.Fatalf("a: %v", ra.err)
	}
	rc, err := chain.Record(context.Background(), completion("c"))
	if err != nil {
		t.Fatal(err)
	}
	ids, hashes := chainEntries(t, st)
	if len(ids) != 2 || ids[0] != "a" || ids[1] != "c" || hashes[0] != ra.rec.Hash || hashes[1] != rc.Hash || rc.PrevHash != ra.rec.Hash {
		t.Fatalf("chain %v %v; want a then c (b withdrawn), with the hashes Record returned", ids, hashes)
	}
}

// TestAuditChainWaitsForAnEntrySent: an entry already sent to the store
// when its caller's wait ends is waited for: Record returns its hash once
// the slow store commits, and the entry is in the chain.
func TestAuditChainWaitsForAnEntrySent(t *testing.T) {
	chain, g, st := slowChain(t, commands.AuditChainConfig{AppendTimeout: time.Minute})
	run(t, chain)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	a := record(ctx, chain, "a")
	<-g.reached
	<-ctx.Done()
	select {
	case r := <-a:
		t.Fatalf("Record of a sent entry returned when its wait ended: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}
	g.release()
	ra := within(t, 30*time.Second, "a", a)
	if ra.err != nil {
		t.Fatalf("a: %v", ra.err)
	}
	if ids, hashes := chainEntries(t, st); len(ids) != 1 || ids[0] != "a" || hashes[0] != ra.rec.Hash {
		t.Fatalf("chain %v %v; want a with hash %s", ids, hashes, ra.rec.Hash)
	}
}

// TestAuditChainRetriesASlowStoreWithTheSameEntries: tries that time out
// while the store holds the first append are retried with the same
// events, so when the store goes on the entry lands once and Record
// returns the hash the chain holds.
func TestAuditChainRetriesASlowStoreWithTheSameEntries(t *testing.T) {
	chain, g, st := slowChain(t, commands.AuditChainConfig{AppendTimeout: 200 * time.Millisecond, RetryBackoff: 10 * time.Millisecond, MaxFailures: 1000})
	run(t, chain)
	a := record(context.Background(), chain, "a")
	<-g.reached
	time.Sleep(time.Second) // several tries time out meanwhile
	g.release()
	ra := within(t, 30*time.Second, "a", a)
	if ra.err != nil {
		t.Fatalf("a: %v", ra.err)
	}
	if ids, hashes := chainEntries(t, st); len(ids) != 1 || ids[0] != "a" || hashes[0] != ra.rec.Hash {
		t.Fatalf("chain %v %v; want a once with hash %s", ids, hashes, ra.rec.Hash)
	}
}

// TestAuditChainStopsWithItsContext: Run returns as soon as its context
// ends, even with an append held by the store and a retry budget of
// hours: the entry still queued is not recorded, the entry held in the
// store is reported as of unknown outcome (the store does commit it once
// it goes on), and Record after the stop fails at once.
func TestAuditChainStopsWithItsContext(t *testing.T) {
	chain, g, st := slowChain(t, commands.AuditChainConfig{AppendTimeout: time.Hour, RetryBackoff: time.Hour, MaxFailures: 1000, MaxAttempts: 1000})
	stop, done := run(t, chain)
	a := record(context.Background(), chain, "a")
	<-g.reached
	b := record(context.Background(), chain, "b")
	time.Sleep(100 * time.Millisecond) // b queued behind a
	stop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s of its context ending (its append timeout and backoff are an hour)")
	}
	ra := within(t, 10*time.Second, "a", a)
	if !errors.Is(ra.err, commands.ErrOutcomeUnknown) {
		t.Fatalf("a, held in the store at the stop: %v, want ErrOutcomeUnknown", ra.err)
	}
	notRecorded(t, "b, queued at the stop", within(t, 10*time.Second, "b", b).err)
	notRecorded(t, "c, after the stop", within(t, 10*time.Second, "c", record(context.Background(), chain, "c")).err)

	g.release()
	var ids []string
	for i := 0; i < 200 && len(ids) == 0; i++ {
		time.Sleep(50 * time.Millisecond)
		ids, _ = chainEntries(t, st)
	}
	if len(ids) != 1 || ids[0] != "a" {
		t.Fatalf("chain %v; want a alone (the store went on with it; b and c never)", ids)
	}
}

// TestAuditChainBacksOffWithinItsContext: a store that refuses every
// append is retried with backoff, at most MaxFailures times; the backoff
// ends with Run's context. A refused append wrote nothing, so the entry is
// reported as not recorded.
func TestAuditChainBacksOffWithinItsContext(t *testing.T) {
	t.Run("bounded tries", func(t *testing.T) {
		chain, g, st := slowChain(t, commands.AuditChainConfig{RetryBackoff: time.Millisecond, MaxFailures: 3})
		g.refuse.Store(true)
		run(t, chain)
		r := within(t, 30*time.Second, "a", record(context.Background(), chain, "a"))
		notRecorded(t, "a, refused by the store", r.err)
		if n := g.calls.Load(); n != 3 {
			t.Fatalf("%d tries, want MaxFailures (3)", n)
		}
		if ids, _ := chainEntries(t, st); len(ids) != 0 {
			t.Fatalf("chain %v after refusals", ids)
		}
	})
	t.Run("backoff ends with the context", func(t *testing.T) {
		chain, g, _ := slowChain(t, commands.AuditChainConfig{RetryBackoff: time.Hour, MaxFailures: 1000})
		g.refuse.Store(true)
		stop, done := run(t, chain)
		a := record(context.Background(), chain, "a")
		<-g.reached
		time.Sleep(100 * time.Millisecond) // in its backoff now
		stop()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return within 10s of its context ending (its backoff is an hour)")
		}
		notRecorded(t, "a", within(t, 10*time.Second, "a", a).err)
	})
}
