package projections_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/logstats"
)

// freezingLogstats is logstats whose apply, in a rebuild's shadow schema,
// stops at an event of type Freeze until release is closed: a rebuild
// process frozen (SIGSTOP, a stalled VM, an operator's Ctrl-Z) at the
// worst moment, inside its swap transaction.
type freezingLogstats struct {
	frozen  chan struct{}
	once    *sync.Once
	release chan struct{}
}

func (f freezingLogstats) Spec() projections.Spec {
	s := logstats.Projection{}.Spec()
	inner := s.AllEvents
	s.AllEvents = func(ctx context.Context, tx pgx.Tx, events []projections.Event) error {
		var schema string
		if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			return err
		}
		for _, e := range events {
			if e.Type == "Freeze" && schema == "rm_logstats__shadow" {
				f.once.Do(func() { close(f.frozen) })
				<-f.release
			}
		}
		return inner(ctx, tx, events)
	}
	return s
}

// TestAtkFrozenSwapStallsTheLiveProjection: a rebuild whose process
// freezes inside its swap transaction (it holds the projection's
// checkpoint row FOR UPDATE to pause the live runners) must not hold the
// live projection forever. The design says a frozen holder loses what it
// holds within LeaseTakeover and cannot commit after waking; the batch
// transactions get that from idle_in_transaction_session_timeout and
// unstick. The swap transaction has neither: it sets no idle timeout and
// takes no batch lock, so unstick never finds it, and the live runner
// answers errBusy for as long as the rebuild stays frozen. For identity
// (fail closed) that refuses every keyed request.
func TestAtkFrozenSwapStallsTheLiveProjection(t *testing.T) {
	pool, st, live := setup(t, logstats.Projection{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- live.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	appendN(t, st, "tick-a", 20)
	waitCount(t, pool, 20)

	fz := freezingLogstats{frozen: make(chan struct{}), once: &sync.Once{}, release: make(chan struct{})}
	rebuilder, err := projections.NewRunner(pool, st, projections.Config{BatchSize: 100}, fz)
	if err != nil {
		t.Fatal(err)
	}
	if err := rebuilder.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	var marked sync.Once
	rebuilt := make(chan error, 1)
	go func() {
		rebuilt <- rebuilder.Rebuild(context.Background(), logstats.Name, func(done, total uint64) {
			// The shadow is loaded: what arrives now is applied by the
			// swap, in its transaction.
			if done >= total {
				marked.Do(func() { appendType(t, st, "Freeze") })
			}
		})
	}()
	defer func() { close(fz.release); <-rebuilt }()
	select {
	case <-fz.frozen:
	case err := <-rebuilt:
		t.Fatalf("the rebuild ended (%v) without reaching its swap's catch-up", err)
	case <-time.After(time.Minute):
		t.Fatal("the rebuild did not reach its swap within a minute")
	}
	// The rebuild is frozen in its swap. Events keep arriving; the live
	// runner should take over well within LeaseTakeover of the freeze.
	appendN(t, st, "tick-b", 5)
	bound := 4 * projections.LeaseTakeover
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		if count(t, pool) >= 26 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	var holders int
	_ = pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%' AND datname = current_database()`).Scan(&holders)
	t.Fatalf("live logstats at %d events, want 26, %s after a rebuild froze in its swap (%d sessions idle in a transaction): the frozen swap holds the checkpoint row and nothing ends it",
		count(t, pool), bound, holders)
}

func waitCount(t *testing.T, pool interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, want int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var n int64
		if err := pool.QueryRow(context.Background(), `SELECT coalesce(sum(events), 0) FROM rm_logstats.event_types`).Scan(&n); err == nil && n >= want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("logstats did not reach %d events within a minute", want)
}

func appendType(t *testing.T, st eventstore.Store, typ string) {
	t.Helper()
	data, _ := json.Marshal(map[string]int{"i": 0})
	if _, err := st.Append(context.Background(), "freeze-1", eventstore.Any(), eventstore.NewEvent{ID: uuid.New(), Type: typ, SchemaVersion: 1, Data: data}); err != nil {
		t.Error(err)
	}
}

// TestAtkRetiredSchemaOutlivesItsReader: a rebuild while a reader (a long
// export) holds the live tables leaves the retired schema, a whole copy
// of the read model, for "the next replay or setup". Once the reader is
// gone nothing in the running process tries the drop again: the copy
// stays on disk until an operator rebuilds again or a process restarts
// (with `arr projections rebuild` run as its own CLI process, the one
// process that tried has exited). A running process should drop it once
// its reader has ended.
func TestAtkRetiredSchemaOutlivesItsReader(t *testing.T) {
	pool, st, r := setup(t, logstats.Projection{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	appendN(t, st, "tick-a", 20)
	waitCount(t, pool, 20)
	bg := context.Background()
	holder, err := pool.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(bg) //nolint:errcheck
	if _, err := holder.Exec(bg, `LOCK TABLE rm_logstats.event_types IN ACCESS SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	if err := r.Rebuild(bg, logstats.Name, nil); err != nil {
		t.Fatal(err)
	}
	if n := retiredSchemas(t, pool); n != 1 {
		t.Fatalf("%d retired schemas while the reader holds one, want 1", n)
	}
	if err := holder.Rollback(bg); err != nil {
		t.Fatal(err)
	}
	// The reader is gone; the process keeps running and events keep
	// flowing.
	bound := 4 * projections.LeaseTakeover
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		if retiredSchemas(t, pool) == 0 {
			return
		}
		appendN(t, st, "tick-b", 1)
		time.Sleep(200 * time.Millisecond)
	}
	var size int64
	_ = pool.QueryRow(bg, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname LIKE 'rm\_logstats\_\_retired%'`).Scan(&size)
	t.Fatalf("%s after its last reader ended, the retired copy of rm_logstats (%d bytes) is still there: the running process never tries the deferred drop again", bound, size)
}
