package projections

import (
	"context"

	"github.com/arr-dev/arr/eventstore"
)

// LogReader is what the runner needs of the event log: read it in
// position order after a checkpoint, know its head (lag, rebuilds) and wait
// for the next event. A LogReader that is also an eventstore.TypeReader is
// asked for the event types a projection handles only. eventstore.Store,
// the implementations' full contract, satisfies it; the runner never
// appends. Implementations are safe for concurrent use.
type LogReader interface {
	// ReadAll reads the whole log after a position (exclusive), in position
	// order, at most limit events, never skipping a committed event.
	ReadAll(ctx context.Context, after uint64, limit int) ([]eventstore.Event, error)
	// Head returns the position of the last committed event (0 when empty).
	Head(ctx context.Context) (uint64, error)
	// WaitForEvents blocks until the log holds an event after position
	// `after`, or ctx ends.
	WaitForEvents(ctx context.Context, after uint64) error
}

// Every store is a LogReader.
var _ LogReader = eventstore.Store(nil)
