package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// AppendBulk leaves the JSON check to the server: a bad event among many
// still fails the whole bulk, says which row, and writes nothing.
func TestBulkRefusesInvalidJSON(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	s, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatalf("new store: %v", err)
	}
	defer s.Close()
	for _, n := range []int{10, 600} { // the INSERT path and the COPY path
		events := make([]eventstore.NewEvent, n)
		for i := range events {
			events[i] = eventstore.NewEvent{ID: uuid.New(), Type: "T", SchemaVersion: 1, Data: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
		}
		events[n/2].Data = json.RawMessage(`{"i": oops}`)
		stream := fmt.Sprintf("badjson-%d", n)
		_, err := s.AppendBulk(context.Background(), []eventstore.Append{{StreamID: stream, Expected: eventstore.NoStream(), Events: events}})
		if err == nil || !strings.Contains(err.Error(), "json") {
			t.Fatalf("%d events: err = %v, want an invalid JSON error", n, err)
		}
		if n >= 256 && !strings.Contains(err.Error(), fmt.Sprintf("line %d", n/2+1)) {
			t.Errorf("COPY error does not name the row: %v", err)
		}
		got, err := s.ReadStream(context.Background(), stream, eventstore.ReadStreamOptions{Limit: 10})
		if err != nil || len(got) != 0 {
			t.Fatalf("failed bulk left %d events (%v)", len(got), err)
		}
	}
}
