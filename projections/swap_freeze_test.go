package projections_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/logstats"
)

// TestFrozenSwapFailsWholeAndRebuildsAgain: a rebuild frozen inside its
// swap loses the checkpoint within BatchIdle (the live runner moves on);
// woken, it fails naming why, having swapped nothing in (the live read
// model counts every event once); the next rebuild swaps in a read model
// equal to the live one.
func TestFrozenSwapFailsWholeAndRebuildsAgain(t *testing.T) {
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
	var marked sync.Once
	rebuilt := make(chan error, 1)
	go func() {
		rebuilt <- rebuilder.Rebuild(context.Background(), logstats.Name, func(done, total uint64) {
			if done >= total {
				marked.Do(func() { appendType(t, st, "Freeze") })
			}
		})
	}()
	released := false
	defer func() {
		if !released {
			close(fz.release)
			<-rebuilt
		}
	}()
	select {
	case <-fz.frozen:
	case err := <-rebuilt:
		t.Fatalf("the rebuild ended (%v) without reaching its swap's catch-up", err)
	case <-time.After(time.Minute):
		t.Fatal("the rebuild did not reach its swap within a minute")
	}
	frozen := time.Now()
	appendN(t, st, "tick-b", 5)
	waitCount(t, pool, 26)
	t.Logf("the live runner applied the events after the freeze %s after it (BatchIdle %s)", time.Since(frozen).Round(time.Millisecond), projections.BatchIdle)
	close(fz.release)
	released = true
	err = <-rebuilt
	if err == nil || !strings.Contains(err.Error(), "nothing was swapped in") {
		t.Fatalf("the woken rebuild returned %v, want a failure that swapped nothing in", err)
	}
	t.Logf("woken: %v", err)
	if n := count(t, pool); n != 26 {
		t.Fatalf("live logstats counts %d events after the failed swap, want 26", n)
	}
	if err := rebuilder.Rebuild(context.Background(), logstats.Name, nil); err != nil {
		t.Fatalf("rebuilding again: %v", err)
	}
	appendN(t, st, "tick-c", 3)
	waitCount(t, pool, 29)
	if n := count(t, pool); n != 29 {
		t.Fatalf("logstats counts %d events after the second rebuild and 3 more, want 29", n)
	}
	if n := retiredSchemas(t, pool); n != 0 {
		t.Fatalf("%d retired schemas left after the second rebuild, want 0", n)
	}
}
