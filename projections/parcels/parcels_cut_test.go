package parcels_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/arr-dev/arr/projections/parcels"

	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/eventstore"
)

// TestParcelsCutBoundsTransactions checks how the live runner splits the
// parcels projection's batches: row chunks are staged about 32 MiB of JSON
// per transaction, and a large load's completion is published in a
// transaction of its own.
func TestParcelsCutBoundsTransactions(t *testing.T) {
	chunk := func() eventstore.Event { // a 1 MiB chunk of rows
		return eventstore.Event{Type: records.LayerRowsLoaded{}.EventType(), Data: bytes.Repeat([]byte("x"), 1<<20)}
	}
	completed := func(rows int) eventstore.Event {
		return eventstore.Event{Type: records.LayerLoadCompleted{}.EventType(), Data: []byte(fmt.Sprintf(`{"rows_loaded":%d}`, rows))}
	}
	small := eventstore.Event{Type: records.LayerLoadStarted{}.EventType(), Data: []byte(`{}`)}
	repeat := func(n int, e eventstore.Event) []eventstore.Event {
		out := make([]eventstore.Event, n)
		for i := range out {
			out[i] = e
		}
		return out
	}
	cases := []struct {
		name   string
		events []eventstore.Event
		want   int
	}{
		{"a small load stays one transaction", append(append([]eventstore.Event{small}, repeat(3, chunk())...), completed(15000)), 5},
		{"chunks are cut at 32 MiB", repeat(100, chunk()), 32},
		{"a big load's completion waits for its own transaction", append(repeat(8, chunk()), completed(1_000_000)), 8},
		{"a big load's completion alone is one transaction", []eventstore.Event{completed(1_000_000), small}, 1},
		{"one event too big for the budget still makes a batch", []eventstore.Event{{Type: records.LayerRowsLoaded{}.EventType(), Data: bytes.Repeat([]byte("x"), 64<<20)}, small}, 1},
		{"events without rows are never cut", repeat(5000, small), 5000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := (parcels.Projection{}).Spec().Cut(c.events); got != c.want {
				t.Errorf("Cut = %d, want %d", got, c.want)
			}
		})
	}
}
