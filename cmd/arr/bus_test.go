package main_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/arr-dev/arr/eventstore/fanout"
	"github.com/arr-dev/arr/eventstore/fanout/natstest"
)

// TestUpPublishesEventsToNATS runs arr up with ARR_BUS=nats against a real
// nats-server -js and reads the account's events back from JetStream, in log
// order, each with its event id as message id.
func TestUpPublishesEventsToNATS(t *testing.T) {
	url := natstest.Start(t)
	e := newEnv(t)
	// No seeding: the local index's DocumentIndexed events would come first.
	e.extraEnv = append(e.extraEnv, "ARR_BUS=nats", "NATS_URL="+url, "ARR_ANSWER_SEED=off")
	e.up()
	e.createAccount("bus@example.com", "pro")
	e.mint("bus@example.com", "gateway")

	sub, closeSub, err := fanout.NewSubscriber(fanout.BusNATS, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSub() //nolint:errcheck
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msgs, err := sub.Subscribe(ctx, fanout.DefaultTopic)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"AccountCreated", "KeyIssued"}
	for i, typ := range want {
		select {
		case m := <-msgs:
			m.Ack()
			var ev struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Position uint64 `json:"position"`
			}
			if err := json.Unmarshal(m.Payload, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Type != typ || ev.Position != uint64(i+1) || m.UUID != ev.ID {
				t.Fatalf("message %d: type %s position %d uuid %s (event id %s); want %s at %d with uuid = event id", i, ev.Type, ev.Position, m.UUID, ev.ID, typ, i+1)
			}
		case <-ctx.Done():
			t.Fatalf("got %d of %d events from NATS", i, len(want))
		}
	}
}
