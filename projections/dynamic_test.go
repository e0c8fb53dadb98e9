package projections_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/arr-dev/arr/projections"
)

// tally counts the events it applies.
type tally struct{ name string }

func (p tally) Spec() projections.Spec {
	return projections.Spec{Name: p.name, DDL: `CREATE TABLE n (one boolean PRIMARY KEY DEFAULT true, events bigint NOT NULL); INSERT INTO n VALUES (true, 0);`,
		AllEvents: p.Apply}
}
func (tally) Apply(ctx context.Context, tx pgx.Tx, events []projections.Event) error {
	_, err := tx.Exec(ctx, `UPDATE n SET events = events + $1`, len(events))
	return err
}

func tallied(t *testing.T, pool *pgxpool.Pool, name string) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), `SELECT events FROM `+pgx.Identifier{projections.Schema(name), "n"}.Sanitize()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAddAndRemoveWhileRunning: a projection added to a running runner is
// set up and followed at once; a removed one is no longer followed.
func TestAddAndRemoveWhileRunning(t *testing.T) {
	pool, st, r := setup(t, tally{"first"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	head := appendN(t, st, "tick-1", 30)
	if err := r.Add(ctx, tally{"second"}, true); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(ctx, tally{"second"}, true); err == nil {
		t.Fatal("added the same name twice")
	}
	waitPosition(t, pool, "second", head)
	if n := tallied(t, pool, "second"); n != 30 {
		t.Fatalf("the added projection applied %d events, want 30", n)
	}
	if !r.Remove("second") || r.Remove("second") {
		t.Fatal("Remove: want true once, then false")
	}
	if _, err := r.Get("second"); err == nil {
		t.Fatal("a removed projection is still registered")
	}
	head = appendN(t, st, "tick-2", 5)
	waitPosition(t, pool, "first", head)
	// "first" has caught up with the events after the removal; "second",
	// no longer followed, stays where it was.
	if n := tallied(t, pool, "second"); n != 30 {
		t.Fatalf("the removed projection went on applying: %d events", n)
	}
}

func waitPosition(t *testing.T, pool *pgxpool.Pool, name string, pos uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var cur int64
		if err := pool.QueryRow(context.Background(), `SELECT position FROM projection_checkpoints WHERE name = $1`, name).Scan(&cur); err != nil {
			t.Fatal(err)
		}
		if uint64(cur) >= pos {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not reach %d within 20s", name, pos)
}

// held is a tally whose batches wait for release once entered is closed.
type held struct {
	tally
	entered, release chan struct{}
	once             *sync.Once
}

func (p held) Spec() projections.Spec {
	s := p.tally.Spec()
	s.AllEvents = p.Apply
	return s
}

func (p held) Apply(ctx context.Context, tx pgx.Tx, events []projections.Event) error {
	p.once.Do(func() { close(p.entered) })
	<-p.release
	return p.tally.Apply(ctx, tx, events)
}

// TestRemoveForgetsTheSeries: once Remove returns, the runner exports no
// series for the removed projection, not even when a batch it had in
// hand finishes (or fails) afterwards.
func TestRemoveForgetsTheSeries(t *testing.T) {
	pool, st, _ := setup(t, tally{"first"})
	reg := prometheus.NewRegistry()
	r, err := projections.NewRunner(pool, st, projections.Config{BatchSize: 100, Registerer: reg}, tally{"first"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	appendN(t, st, "tick", 10)
	p := held{tally{"second"}, make(chan struct{}), make(chan struct{}), &sync.Once{}}
	if err := r.Add(ctx, p, true); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the added projection applied no batch within 20s")
	}
	if !r.Remove("second") {
		t.Fatal("Remove: the runner did not have it")
	}
	close(p.release) // the batch in hand finishes after the removal
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	// What the caller of Remove drops (sqlproj's Drop does): the
	// checkpoint, which arr_projection_parked_events reads at scrape time.
	if _, err := pool.Exec(context.Background(), `DELETE FROM projection_checkpoints WHERE name = 'second'`); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "projection" && l.GetValue() == "second" {
					t.Errorf("%s{projection=%q} is still exported after Remove", f.GetName(), l.GetValue())
				}
			}
		}
	}
}
