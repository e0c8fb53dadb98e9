package projections_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/projections/logstats"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
)

// slowCount is LogStats whose every batch takes 300 ms of database time.
type slowCount struct{ logstats.Projection }

func (s slowCount) Spec() projections.Spec {
	spec := s.Projection.Spec()
	spec.Name, spec.AllEvents = "slow_count", s.Apply
	return spec
}

func (s slowCount) Apply(ctx context.Context, tx pgx.Tx, events []projections.Event) error {
	if _, err := tx.Exec(ctx, `SELECT pg_sleep(0.3)`); err != nil {
		return err
	}
	return s.Projection.Spec().AllEvents(ctx, tx, events)
}

// TestBatchThatRunsOutOfTimeGetsLonger: a batch that needs more than
// BatchTimeout is rolled back, then retried with twice the time until it
// fits, and applied once; the next batch starts again from BatchTimeout.
func TestBatchThatRunsOutOfTimeGetsLonger(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	r, err := projections.NewRunner(pool, st, projections.Config{BatchSize: 100, BatchTimeout: 150 * time.Millisecond, MaxBatchTimeout: 10 * time.Second}, slowCount{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	pos := appendN(t, st, "tick-slow", 10)
	var failures []error
	for try := 0; try < 8; {
		_, n, err := r.Step(ctx, "slow_count")
		if err == nil && n > 0 {
			break
		}
		if err == nil {
			t.Fatalf("try %d: nothing applied and no error", try)
		}
		if strings.Contains(err.Error(), "held by another runner") {
			// The timed-out try's backend still sleeps with the checkpoint
			// row locked until it notices its connection is gone.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		failures = append(failures, err)
		try++
	}
	if len(failures) == 0 || !errors.Is(failures[0], context.DeadlineExceeded) || !strings.Contains(failures[0].Error(), "ran out of its 150ms") {
		t.Fatalf("the first try should run out of its 150ms, got %v", failures)
	}
	var cp int64
	if err := pool.QueryRow(ctx, `SELECT position FROM projection_checkpoints WHERE name = 'slow_count'`).Scan(&cp); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(events), 0) FROM rm_slow_count.event_types`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if uint64(cp) != pos || n != 10 {
		t.Fatalf("after %d timed-out tries: checkpoint %d (want %d), %d events counted (want 10, once each)", len(failures), cp, pos, n)
	}
	// Back to the configured timeout: the next slow batch runs out again.
	appendN(t, st, "tick-slow", 1)
	if _, _, err := r.Step(ctx, "slow_count"); err == nil || !strings.Contains(err.Error(), "ran out of its 150ms") {
		t.Fatalf("after a success the timeout should be 150ms again, got %v", err)
	}
	for _, f := range failures {
		if !errors.Is(f, context.DeadlineExceeded) {
			t.Fatalf("every failed try should be a timeout, got %v", f)
		}
	}
}

// patientCount is slowCount asking, through Spec.BatchTimeout, 100 ms an
// event of its batches: capped at MaxBatchTimeout.
type patientCount struct{ slowCount }

func (p patientCount) Spec() projections.Spec {
	spec := p.slowCount.Spec()
	spec.Name = "patient_count"
	spec.BatchTimeout = func(events []eventstore.Event) time.Duration {
		return time.Duration(len(events)) * 100 * time.Millisecond
	}
	return spec
}

// TestBatchTimeoutOfTheSpec: a batch whose spec asks more time than
// BatchTimeout gets it (applied on the first try, where slowCount's batch
// runs out), no more than MaxBatchTimeout.
func TestBatchTimeoutOfTheSpec(t *testing.T) {
	cases := []struct {
		name    string
		events  int
		max     time.Duration
		ranOut  bool
		message string
	}{
		{name: "ten events get a second", events: 10, max: 10 * time.Second},
		{name: "capped at MaxBatchTimeout", events: 10, max: 200 * time.Millisecond, ranOut: true, message: "ran out of its 200ms"},
		{name: "one event asks less than BatchTimeout", events: 1, max: 10 * time.Second, ranOut: true, message: "ran out of its 150ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pool, _ := migratetest.NewPool(t)
			st, err := postgres.New(pool, postgres.Config{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			r, err := projections.NewRunner(pool, st, projections.Config{BatchSize: 100, BatchTimeout: 150 * time.Millisecond, MaxBatchTimeout: c.max}, patientCount{})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := r.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			appendN(t, st, "tick-patient", c.events)
			_, n, err := r.Step(ctx, "patient_count")
			if !c.ranOut {
				if err != nil || n != c.events {
					t.Fatalf("first try: %d events applied, %v; want %d at once", n, err, c.events)
				}
				return
			}
			if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), c.message) {
				t.Fatalf("first try: %v, want it to %s", err, c.message)
			}
		})
	}
}
