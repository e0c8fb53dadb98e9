package projections_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/logstats"
)

// TestTrickleCatchesUpOncePerMinInterval: under a steady trickle of
// events (one every 10 ms, 150 of them: 1.5 s or more), a following
// projection catches up at most once per MinInterval (300 ms here: at most
// the trickle's length / 300 ms batches, plus the first and the last)
// instead of once per Linger, and still applies every event.
func TestTrickleCatchesUpOncePerMinInterval(t *testing.T) {
	pool, st, _ := setup(t, logstats.Projection{})
	reg := prometheus.NewRegistry()
	r, err := projections.NewRunner(pool, st, projections.Config{Linger: time.Millisecond, MinInterval: 300 * time.Millisecond, Registerer: reg},
		logstats.Projection{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	const n = 150
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	began := time.Now()
	for i := 0; i < n; i++ {
		<-tick.C
		appendN(t, st, "trickle", 1)
	}
	// On a loaded machine the trickle lasts longer than 1.5 s: the bound
	// follows how long it lasted.
	most := uint64(time.Since(began)/(300*time.Millisecond)) + 2
	deadline := time.Now().Add(10 * time.Second)
	for count(t, pool) < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := count(t, pool); got != n {
		t.Fatalf("logstats counts %d events, want %d", got, n)
	}
	batches := batchCount(t, reg, "logstats")
	if batches < 1 || batches > most {
		t.Fatalf("%d events over %s were applied in %d batches; with MinInterval 300 ms want at most %d", n, time.Since(began).Round(time.Millisecond), batches, most)
	}
	t.Logf("%d events arriving every 10 ms applied in %d batches", n, batches)
}

// batchCount is how many batches projection name applied, from the
// runner's batch_seconds histogram.
func batchCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "arr_projection_batch_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if labelIs(m, "projection", name) {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	t.Fatalf("no arr_projection_batch_seconds series for %s", name)
	return 0
}

func labelIs(m *dto.Metric, k, v string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == k && l.GetValue() == v {
			return true
		}
	}
	return false
}
