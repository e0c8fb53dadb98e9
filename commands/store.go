package commands

import (
	"context"

	"github.com/arr-dev/arr/eventstore"
)

// StreamReader reads one stream of the event log: what a command loads to
// decide (an aggregate's events, a chain's last entry).
type StreamReader interface {
	// ReadStream reads one stream; a stream with no events reads as empty.
	ReadStream(ctx context.Context, streamID string, opts eventstore.ReadStreamOptions) ([]eventstore.Event, error)
}

// Appender is what the commands need of the event log, and all they may
// use of it: read a stream to decide, append under an expected version,
// and append many streams at once for imports. Appender, the
// implementations' full contract, satisfies it; a command never reads the
// whole log, waits on it or subscribes to it. Implementations are safe for
// concurrent use.
type Appender interface {
	StreamReader
	// Append writes events to one stream atomically under an expected
	// version (see Appender.Append for what its errors promise).
	Append(ctx context.Context, streamID string, expected eventstore.ExpectedVersion, events ...eventstore.NewEvent) (eventstore.AppendResult, error)
	// AppendBulk writes many appends in one transaction, all or nothing.
	AppendBulk(ctx context.Context, appends []eventstore.Append) ([]eventstore.AppendResult, error)
}

// Every store is an Appender.
var _ Appender = Appender(nil)
