package fanout_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/arr-dev/arr/eventstore/fanout"
	"github.com/arr-dev/arr/eventstore/fanout/natstest"
)

// TestNATSClusterLosesNoEventWhenANodeStops: with NATS_URL naming a
// three-node JetStream cluster, the fan-out's stream is kept by all three
// (R3); kill -9 of the node that leads the stream, while events are
// published, loses none and reorders none for a consumer: after dropping
// repeats (re-publishes JetStream could not deduplicate, re-deliveries),
// a durable consumer (replicated like the stream) sees the whole log in
// order. A delivery lost with the node is redelivered after AckWait before
// anything later (TestNATSConsumerInOrderWhenADeliveryIsLost makes that
// loss happen every time; here it happens only when the kill catches a
// delivery in flight).
func TestNATSClusterLosesNoEventWhenANodeStops(t *testing.T) {
	t.Parallel()
	c := natstest.StartCluster(t, 3)
	url := c.URL()
	if got := fanout.Replicas(url); got != 3 {
		t.Fatalf("Replicas(%q) = %d, want 3", url, got)
	}
	pool, store := newStore(t)
	seed(t, store)

	sub, closeSub, err := fanout.NewDurableSubscriber(fanout.BusNATS, url, "cluster-test", testLogger())
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
	first := readLog(t, store)
	col.wait(t, len(first))

	// The stream is R3; stop its leader while more events are published.
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	info, err := js.StreamInfo(fanout.StreamName(fanout.DefaultTopic))
	nc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Replicas != 3 || info.Cluster == nil || c.Node(info.Cluster.Leader) == nil {
		t.Fatalf("stream %s: replicas %d, cluster %+v", info.Config.Name, info.Config.Replicas, info.Cluster)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		appendConcurrently(t, store, "during", 3, 20, 10)
	}()
	time.Sleep(200 * time.Millisecond)
	stopped := time.Now()
	c.Node(info.Cluster.Leader).Stop()
	<-done
	appendBulk(t, store, "after", 10, 20)

	log := readLog(t, store)
	waitCheckpoint(t, pool, "restart", log[len(log)-1].Position)
	checkFirstOccurrences(t, col.wait(t, len(log)), log)
	if err := run.stop(t); err != nil {
		t.Fatalf("forwarder: %v", err)
	}
	t.Logf("stopped the stream's leader %s; %d events, all received in order %s after", info.Cluster.Leader, len(log), time.Since(stopped).Round(time.Millisecond))
}
