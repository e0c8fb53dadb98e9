package fanout_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/arr-dev/arr/eventstore/fanout"
)

// TestNATSConsumerInOrderWhenADeliveryIsLost: a delivery JetStream made
// but the consumer never received (lost with a node killed, or with a
// connection cut mid-delivery) is redelivered only after the consumer's
// AckWait. A consumer that let later messages be delivered meanwhile saw
// them first, out of log order; NewDurableSubscriber's consumer has one
// message in flight at most, so the lost one comes again before any later
// one, and the first occurrences are the log in order.
func TestNATSConsumerInOrderWhenADeliveryIsLost(t *testing.T) {
	t.Parallel()
	url := startNATS(t)
	proxy, proxied := startLossyProxy(t, url)
	pool, store := newStore(t)
	appendBulk(t, store, "before", 2, 5)

	sub, closeSub, err := fanout.NewDurableSubscriber(fanout.BusNATS, proxied, "lost-delivery", testLogger())
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
	col := collect(t, ch)
	ctx, cancel := context.WithCancel(context.Background())
	run := start(t, ctx, cancel, newForwarder(t, pool, store, newNATSPublisher(t, url), nil))
	col.wait(t, len(readLog(t, store)))

	// The next event is delivered into the proxy and lost there.
	proxy.drop()
	appendBulk(t, store, "lost", 1, 1)
	waitAckPending(t, url, "lost-delivery", 1)
	proxy.cut()
	appendBulk(t, store, "after", 2, 5)

	log := readLog(t, store)
	waitCheckpoint(t, pool, "restart", log[len(log)-1].Position)
	checkFirstOccurrences(t, col.wait(t, len(log)), log)
	if err := run.stop(t); err != nil {
		t.Fatalf("forwarder: %v", err)
	}
}

// waitAckPending waits until the durable consumer has n messages delivered
// and not acknowledged.
func waitAckPending(t testing.TB, url, durable string, n int) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("connecting to NATS: %v", err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatalf("opening JetStream: %v", err)
	}
	deadline := time.Now().Add(waitLimit)
	for {
		info, err := js.ConsumerInfo(fanout.StreamName(fanout.DefaultTopic), durable)
		if err == nil && info.NumAckPending == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer %s: info %+v (err %v), want %d delivered unacknowledged within %s", durable, info, err, n, waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
