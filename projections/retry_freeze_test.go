package projections_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/logstats"
)

// poisonLogstats is logstats that fails an event of type Poison while
// poisoned (so it is parked), and, while freezing, stops at it in the
// live schema until release is closed: `arr projections retry` frozen
// inside its transaction.
type poisonLogstats struct {
	poisoned, freezing *atomic.Bool
	frozen             chan struct{}
	once               *sync.Once
	release            chan struct{}
}

func (f poisonLogstats) Spec() projections.Spec {
	s := logstats.Projection{}.Spec()
	inner := s.AllEvents
	s.AllEvents = func(ctx context.Context, tx pgx.Tx, events []projections.Event) error {
		for _, e := range events {
			switch {
			case e.Type != "Poison":
			case f.poisoned.Load():
				return errors.New("poisoned")
			case f.freezing.Load():
				f.once.Do(func() { close(f.frozen) })
				<-f.release
			}
		}
		return inner(ctx, tx, events)
	}
	return s
}

// TestFrozenRetryOfParkedEventsDoesNotStallTheLiveProjection: a retry of
// parked events holds the projection's checkpoint as a rebuild's swap
// does; frozen inside its transaction, it frees it within BatchIdle, and
// woken it fails having applied nothing; run again, it applies the event.
func TestFrozenRetryOfParkedEventsDoesNotStallTheLiveProjection(t *testing.T) {
	pool, st, _ := setup(t, logstats.Projection{})
	fz := poisonLogstats{poisoned: &atomic.Bool{}, freezing: &atomic.Bool{}, frozen: make(chan struct{}), once: &sync.Once{}, release: make(chan struct{})}
	fz.poisoned.Store(true)
	live, err := projections.NewRunner(pool, st, projections.Config{BatchSize: 100, ParkAfter: 1}, fz)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- live.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	appendN(t, st, "tick-a", 5)
	appendType(t, st, "Poison")
	appendN(t, st, "tick-b", 5)
	waitCount(t, pool, 10)
	if n, err := projections.CountParked(ctx, pool, logstats.Name); err != nil || n != 1 {
		t.Fatalf("%d parked (%v), want the poison parked", n, err)
	}
	fz.poisoned.Store(false)
	fz.freezing.Store(true)
	retried := make(chan error, 1)
	go func() {
		_, err := live.RetryParked(context.Background(), logstats.Name, nil)
		retried <- err
	}()
	released := false
	defer func() {
		if !released {
			close(fz.release)
			<-retried
		}
	}()
	select {
	case <-fz.frozen:
	case err := <-retried:
		t.Fatalf("the retry ended (%v) without reaching the parked event", err)
	case <-time.After(time.Minute):
		t.Fatal("the retry did not reach the parked event within a minute")
	}
	frozen := time.Now()
	appendN(t, st, "tick-c", 3)
	deadline := time.Now().Add(4 * projections.LeaseTakeover)
	for count(t, pool) < 13 {
		if time.Now().After(deadline) {
			t.Fatalf("live logstats at %d events, want 13, %s after a retry of parked events froze", count(t, pool), 4*projections.LeaseTakeover)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the live runner went on %s after the retry froze", time.Since(frozen).Round(time.Millisecond))
	close(fz.release)
	released = true
	if err := <-retried; err == nil {
		t.Fatal("the woken retry committed")
	}
	if n, err := projections.CountParked(ctx, pool, logstats.Name); err != nil || n != 1 || count(t, pool) != 13 {
		t.Fatalf("after the woken retry failed: %d parked (%v), %d counted; want 1 and 13", n, err, count(t, pool))
	}
	res, err := live.RetryParked(context.Background(), logstats.Name, nil)
	if err != nil || res.Applied != 1 || res.StillParked != 0 {
		t.Fatalf("retrying again: %+v, %v; want the poison applied", res, err)
	}
	if n := count(t, pool); n != 14 {
		t.Fatalf("counted %d, want 14", n)
	}
}
