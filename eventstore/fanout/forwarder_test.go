package fanout_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arr-dev/arr/eventstore/fanout"
)

// TestForwarderDeliversLogInOrder forwards a 2,000-event log, then events
// appended while it waits, over each bus, and checks every event arrives
// once, in position order, with its id as message UUID.
func TestForwarderDeliversLogInOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, kind string
	}{
		{name: "nats jetstream", kind: fanout.BusNATS},
		{name: "gochannel", kind: fanout.BusGoChannel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var url string
			if tc.kind == fanout.BusNATS {
				url = startNATS(t)
			}
			pool, store := newStore(t)
			seed(t, store)
			bus, err := fanout.NewPubSub(tc.kind, url, testLogger())
			if err != nil {
				t.Fatalf("bus: %v", err)
			}
			pub, sub, closeBus := bus.Publisher, bus.Subscriber, bus.Close
			t.Cleanup(func() { _ = closeBus() })
			subCtx, endSub := context.WithCancel(context.Background())
			t.Cleanup(endSub)
			ch, err := sub.Subscribe(subCtx, fanout.DefaultTopic)
			if err != nil {
				t.Fatalf("subscribe: %v", err)
			}
			c := collect(t, ch)

			reg := prometheus.NewRegistry()
			f, err := fanout.NewForwarder(pool, store, pub, fanout.Config{
				Name: "order", BatchSize: 128, Registerer: reg, Logger: testLogger(),
			})
			if err != nil {
				t.Fatalf("new forwarder: %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			run := start(t, ctx, cancel, f)

			log := readLog(t, store)
			checkExact(t, c.wait(t, len(log)), log)
			// The first Run is surely under way now: a second must be refused.
			again, stopAgain := context.WithTimeout(context.Background(), 5*time.Second)
			defer stopAgain()
			if err := f.Run(again); err == nil {
				t.Fatal("a second concurrent Run returned nil, want an error")
			}
			// Appended after the forwarder caught up: it must wake, not poll.
			appendConcurrently(t, store, "tail", 3, 10, 5)
			appendBulk(t, store, "tail", 2, 25)
			log = readLog(t, store)
			checkExact(t, c.wait(t, len(log)), log)

			head := log[len(log)-1].Position
			waitCheckpoint(t, pool, "order", head)
			if err := run.stop(t); err != nil {
				t.Fatalf("Run returned %v, want nil after cancel", err)
			}
			if cp := checkpointOf(t, pool, "order"); cp != head {
				t.Fatalf("checkpoint %d, want head %d", cp, head)
			}
			if got := metricValue(t, reg, "arr_fanout_published_events_total"); got != float64(len(log)) {
				t.Fatalf("published counter %v, want %d", got, len(log))
			}
			if got := metricValue(t, reg, "arr_fanout_lag_events"); got != 0 {
				t.Fatalf("lag gauge %v, want 0", got)
			}
		})
	}
}
