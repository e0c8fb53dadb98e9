package fanout_test

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/arr-dev/arr/eventstore/fanout/natstest"
)

// startNATS starts a private nats-server with JetStream for the test.
func startNATS(t testing.TB) string {
	t.Helper()
	return natstest.Start(t)
}

// streamMessages returns how many messages the JetStream stream holds.
func streamMessages(t testing.TB, url, stream string) uint64 {
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
	info, err := js.StreamInfo(stream)
	if err != nil {
		t.Fatalf("stream info %s: %v", stream, err)
	}
	return info.State.Msgs
}

func freePort(t testing.TB) int {
	t.Helper()
	return natstest.FreePort(t)
}
