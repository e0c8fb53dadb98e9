package projections_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections/logstats"
	"github.com/arr-dev/arr/projections/projectiontest"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/projections"
)

func setup(t *testing.T, ps ...projections.Projection) (*pgxpool.Pool, eventstore.Store, *projections.Runner) {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	return projectiontest.Setup(t, pool, ps...)
}

func appendN(t *testing.T, st eventstore.Store, stream string, n int) uint64 {
	t.Helper()
	var last uint64
	for i := 0; i < n; i++ {
		data, _ := json.Marshal(map[string]int{"i": i})
		r, err := st.Append(context.Background(), stream, eventstore.Any(), eventstore.NewEvent{ID: uuid.New(), Type: "Ticked", SchemaVersion: 1, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		last = r.LastPosition
	}
	return last
}

func count(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), `SELECT coalesce(sum(events), 0) FROM rm_logstats.event_types`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWaitForAppliesPendingBatches(t *testing.T) {
	pool, st, r := setup(t, logstats.Projection{})
	pos := appendN(t, st, "tick-1", 250)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.WaitFor(ctx, logstats.Name, pos); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool); n != 250 {
		t.Fatalf("counted %d events, want 250", n)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if err := r.WaitFor(short, logstats.Name, pos+1000); err == nil {
		t.Fatalf("waiting for a position that does not exist returned nil")
	}
}

func TestConcurrentRunnersApplyEachEventOnce(t *testing.T) {
	pool, st, r := setup(t, logstats.Projection{})
	r2, err := projections.NewRunner(pool, st, projections.Config{BatchSize: 7}, logstats.Projection{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []*projections.Runner{r, r2} {
		wg.Add(1)
		go func(run *projections.Runner) { defer wg.Done(); _ = run.Run(ctx) }(run)
	}
	var last uint64
	var aw sync.WaitGroup
	var mu sync.Mutex
	for w := 0; w < 4; w++ {
		aw.Add(1)
		go func(w int) {
			defer aw.Done()
			p := appendN(t, st, fmt.Sprintf("tick-%d", w), 200)
			mu.Lock()
			last = max(last, p)
			mu.Unlock()
		}(w)
	}
	aw.Wait()
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := r.WaitFor(wctx, logstats.Name, last); err != nil {
		t.Fatal(err)
	}
	cancel()
	wg.Wait()
	if n := count(t, pool); n != 800 {
		t.Fatalf("two runners counted %d events, want 800", n)
	}
}

func TestReplayFromPosition(t *testing.T) {
	pool, st, r := setup(t, logstats.Projection{})
	mid := appendN(t, st, "tick-a", 100)
	appendN(t, st, "tick-b", 50)
	var progressCalls int
	if err := r.Replay(context.Background(), logstats.Name, mid, func(done, total uint64) {
		progressCalls++
		if done > total {
			t.Errorf("progress %d/%d", done, total)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool); n != 50 {
		t.Fatalf("replay from %d counted %d events, want the 50 after it", mid, n)
	}
	if progressCalls == 0 {
		t.Fatalf("no progress reported")
	}
	if err := r.Rebuild(context.Background(), logstats.Name, nil); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool); n != 150 {
		t.Fatalf("rebuild counted %d, want 150", n)
	}
	var schemas int
	_ = pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'rm_logstats%'`).Scan(&schemas)
	if schemas != 1 {
		t.Fatalf("%d rm_logstats* schemas left after rebuilds, want 1 (no shadow or retired leftovers)", schemas)
	}
}

// changedStats is LogStats with different DDL: Setup must notice and
// rebuild it from the log.
type changedStats struct{ logstats.Projection }

func (c changedStats) Spec() projections.Spec {
	s := c.Projection.Spec()
	s.DDL += "\nCREATE INDEX event_types_events ON event_types (events);"
	return s
}

func TestSetupRebuildsWhenDDLChanges(t *testing.T) {
	pool, st, r := setup(t, logstats.Projection{})
	pos := appendN(t, st, "tick-1", 30)
	if err := r.WaitFor(context.Background(), logstats.Name, pos); err != nil {
		t.Fatal(err)
	}
	r2, err := projections.NewRunner(pool, st, projections.Config{}, changedStats{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	var idx int
	_ = pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_indexes WHERE schemaname = 'rm_logstats' AND indexname = 'event_types_events'`).Scan(&idx)
	if idx != 1 || count(t, pool) != 30 {
		t.Fatalf("after a DDL change: index present=%d, counted %d; want 1 and 30", idx, count(t, pool))
	}
}
