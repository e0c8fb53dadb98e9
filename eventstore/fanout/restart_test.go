package fanout_test

import (
	"context"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/fanout"
)

// TestForwarderAtLeastOnceAcrossRestart interrupts a forwarder publishing
// to NATS JetStream, starts a new one with the same name, and checks that
// every event arrived, first occurrences in log order, that the checkpoint
// reached the head, and that JetStream kept each event once because the
// message UUID is sent as Nats-Msg-Id.
func TestForwarderAtLeastOnceAcrossRestart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault fault
		// republished says the first run published past its checkpoint.
		republished bool
		minErrors   float64
	}{
		{name: "graceful stop midway", fault: fault{after: 700, stop: true}},
		{name: "crash after publish before checkpoint", fault: fault{after: 700, stop: true, fail: 1}, republished: true, minErrors: 1},
		{name: "failed publishes retried not skipped", fault: fault{after: 700, fail: 3}, minErrors: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := startNATS(t)
			pool, store := newStore(t)
			seed(t, store)
			log := readLog(t, store)
			head := log[len(log)-1].Position

			sub, closeSub, err := fanout.NewSubscriber(fanout.BusNATS, url, testLogger())
			if err != nil {
				t.Fatalf("subscriber: %v", err)
			}
			t.Cleanup(func() { _ = closeSub() })
			subCtx, endSub := context.WithCancel(context.Background())
			t.Cleanup(endSub)
			ch, err := sub.Subscribe(subCtx, fanout.DefaultTopic)
			if err != nil {
				t.Fatalf("subscribe: %v", err)
			}
			c := collect(t, ch)

			// First run: the fault interrupts or disturbs it.
			ctx, cancel := context.WithCancel(context.Background())
			faulty := &faultyPublisher{Publisher: newNATSPublisher(t, url), fault: tc.fault, cancel: cancel}
			reg := prometheus.NewRegistry()
			first := start(t, ctx, cancel, newForwarder(t, pool, store, faulty, reg))
			if tc.fault.stop {
				if err := first.wait(t); err != nil {
					t.Fatalf("interrupted Run returned %v, want nil", err)
				}
			} else {
				waitCheckpoint(t, pool, "restart", head)
			}
			if err := first.stop(t); err != nil {
				t.Fatalf("first Run returned %v, want nil", err)
			}
			cp := checkpointOf(t, pool, "restart")
			last := faulty.lastPosition()
			if tc.fault.stop && (cp == 0 || cp >= head) {
				t.Fatalf("checkpoint after the interrupted run is %d, want between 0 and head %d", cp, head)
			}
			if past := last > cp; past != tc.republished {
				t.Fatalf("published up to %d, checkpoint %d: published past checkpoint = %v, want %v", last, cp, past, tc.republished)
			}
			if got := metricValue(t, reg, "arr_fanout_errors_total"); got < tc.minErrors {
				t.Fatalf("errors counter %v, want at least %v", got, tc.minErrors)
			}

			// Second run, same name: resumes from the checkpoint.
			ctx2, cancel2 := context.WithCancel(context.Background())
			second := start(t, ctx2, cancel2, newForwarder(t, pool, store, newNATSPublisher(t, url), nil))
			checkFirstOccurrences(t, c.wait(t, len(log)), log)
			waitCheckpoint(t, pool, "restart", head)
			if err := second.stop(t); err != nil {
				t.Fatalf("second Run returned %v, want nil", err)
			}
			if cp := checkpointOf(t, pool, "restart"); cp != head {
				t.Fatalf("checkpoint %d, want head %d", cp, head)
			}
			if n := streamMessages(t, url, fanout.StreamName(fanout.DefaultTopic)); n != uint64(len(log)) {
				t.Fatalf("JetStream stream holds %d messages, want %d (re-publishes deduplicated by Nats-Msg-Id)", n, len(log))
			}
		})
	}
}

func newNATSPublisher(t testing.TB, url string) message.Publisher {
	t.Helper()
	pub, closePub, err := fanout.NewPublisher(fanout.BusNATS, url, testLogger())
	if err != nil {
		t.Fatalf("NATS publisher: %v", err)
	}
	t.Cleanup(func() { _ = closePub() })
	return pub
}

func newForwarder(t testing.TB, pool *pgxpool.Pool, store eventstore.Store, pub message.Publisher, reg prometheus.Registerer) *fanout.Forwarder {
	t.Helper()
	f, err := fanout.NewForwarder(pool, store, pub, fanout.Config{
		Name: "restart", BatchSize: 100, Registerer: reg, Logger: testLogger(),
		MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("new forwarder: %v", err)
	}
	return f
}
