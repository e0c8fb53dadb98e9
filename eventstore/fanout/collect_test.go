package fanout_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/fanout"
)

// collector acks and keeps every message a subscription delivers.
type collector struct {
	mu     sync.Mutex
	msgs   []*message.Message
	unique map[string]bool
	done   chan struct{}
}

func collect(t testing.TB, ch <-chan *message.Message) *collector {
	t.Helper()
	c := &collector{unique: map[string]bool{}, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for m := range ch {
			c.mu.Lock()
			c.msgs = append(c.msgs, m)
			c.unique[m.UUID] = true
			c.mu.Unlock()
			m.Ack()
		}
	}()
	return c
}

// wait returns everything received once n distinct messages arrived.
func (c *collector) wait(t testing.TB, n int) []*message.Message {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		c.mu.Lock()
		got, all := len(c.unique), append([]*message.Message(nil), c.msgs...)
		c.mu.Unlock()
		if got >= n {
			return all
		}
		if time.Now().After(deadline) {
			t.Fatalf("received %d distinct messages (%d in all), want %d within %s", got, len(all), n, waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkExact asserts got is the log, message for message, in order.
func checkExact(t testing.TB, got []*message.Message, log []eventstore.Event) {
	t.Helper()
	if len(got) != len(log) {
		t.Fatalf("received %d messages, want exactly %d", len(got), len(log))
	}
	for i, e := range log {
		checkMessage(t, got[i], e)
	}
}

// checkFirstOccurrences asserts that, after dropping repeated UUIDs, got is
// the log in order: at-least-once, in order.
func checkFirstOccurrences(t testing.TB, got []*message.Message, log []eventstore.Event) {
	t.Helper()
	seen := map[string]bool{}
	var firsts []*message.Message
	for _, m := range got {
		if !seen[m.UUID] {
			seen[m.UUID] = true
			firsts = append(firsts, m)
		}
	}
	checkExact(t, firsts, log)
}

func checkMessage(t testing.TB, m *message.Message, want eventstore.Event) {
	t.Helper()
	if m.UUID != want.ID.String() {
		t.Fatalf("message at position %d: UUID %s, want event id %s (metadata position %s)",
			want.Position, m.UUID, want.ID, m.Metadata.Get(fanout.MetaPosition))
	}
	for key, val := range map[string]string{
		fanout.MetaPosition:      strconv.FormatUint(want.Position, 10),
		fanout.MetaEventType:     want.Type,
		fanout.MetaStreamID:      want.StreamID,
		fanout.MetaSchemaVersion: strconv.Itoa(want.SchemaVersion),
		fanout.MetaCorrelationID: want.Metadata.CorrelationID,
	} {
		if got := m.Metadata.Get(key); got != val {
			t.Fatalf("message %s: metadata %s = %q, want %q", m.UUID, key, got, val)
		}
	}
	e, err := fanout.FromMessage(m)
	if err != nil {
		t.Fatalf("decoding payload: %v", err)
	}
	if e.ID != want.ID || e.Position != want.Position || e.StreamVersion != want.StreamVersion ||
		compact(t, e.Data) != compact(t, want.Data) || !e.RecordedAt.Equal(want.RecordedAt) {
		t.Fatalf("payload %+v, want %+v", e, want)
	}
}

func compact(t testing.TB, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("compacting %s: %v", raw, err)
	}
	return b.String()
}
