package eventstore

import (
	"context"
	"errors"

	"github.com/arr-dev/arr/domain"
)

// Append is one atomic append: all of Events land in StreamID, in order,
// or none do.
type Append struct {
	StreamID string
	Expected ExpectedVersion
	Events   []NewEvent
}

// AppendResult says where an append landed. Duplicate is true when every
// event id was already in the log (an idempotent retry): nothing was written
// and the positions are those of the first append.
type AppendResult struct {
	StreamID      string
	FirstVersion  uint64
	LastVersion   uint64
	FirstPosition uint64
	LastPosition  uint64
	Duplicate     bool
}

// ReadStreamOptions selects a slice of one stream.
type ReadStreamOptions struct {
	// Backward reads from From (or the end when FromEnd) towards version 0.
	Backward bool
	// From is the first stream version to return (inclusive).
	From uint64
	// FromEnd starts a backward read at the stream's last event.
	FromEnd bool
	// Limit caps the number of events; 0 means 1000.
	Limit int
}

// Handler receives a batch of events from a subscription, in log order.
// Returning an error stops the subscription with that error.
type Handler func(ctx context.Context, events []Event) error

// Store is the event log. Implementations are safe for concurrent use.
type Store interface {
	// Append writes events to one stream atomically under an expected version.
	// A failed expectation returns *WrongExpectedVersionError. An error that
	// wraps ErrNotAppended guarantees that nothing was written; any other
	// error may hide a commit (a timeout, a connection lost after COMMIT was
	// sent): retrying with the same event ids is safe and tells which.
	Append(ctx context.Context, streamID string, expected ExpectedVersion, events ...NewEvent) (AppendResult, error)
	// AppendBulk writes many appends in one transaction, all or nothing, by
	// the fastest path the store has (COPY on PostgreSQL). For imports.
	AppendBulk(ctx context.Context, appends []Append) ([]AppendResult, error)
	// ReadStream reads one stream. A stream with no events reads as empty.
	ReadStream(ctx context.Context, streamID string, opts ReadStreamOptions) ([]Event, error)
	// ReadAll reads the whole log after a position (exclusive), in position
	// order, at most limit events. It never skips a committed event.
	ReadAll(ctx context.Context, after uint64, limit int) ([]Event, error)
	// Head returns the position of the last committed event (0 when empty).
	Head(ctx context.Context) (uint64, error)
	// WaitForEvents blocks until the log holds an event after position
	// `after`, or ctx ends.
	WaitForEvents(ctx context.Context, after uint64) error
	// Subscribe is a catch-up subscription: it delivers every event after
	// `after`, in order, in batches, then keeps delivering new ones until ctx
	// ends (returning nil) or handle fails (returning its error).
	Subscribe(ctx context.Context, after uint64, handle Handler) error
	// Close releases the store's resources.
	Close() error
}

// TypeReader is a Store that can read the log for some event types only,
// leaving the others on the server: readers that care for few types (most
// projections) then neither transfer nor decode the rest.
type TypeReader interface {
	// ReadAllOfTypes reads, after position `after`, at most limit events
	// whose type is one of types, in position order, and returns them with
	// the position the read covers: every event in (after, upTo] that it
	// did not return is of another type. upTo is at least after. Like
	// ReadAll it never skips a committed event of those types.
	ReadAllOfTypes(ctx context.Context, after uint64, limit int, types []string) (events []Event, upTo uint64, err error)
}

// ErrDuplicateEventID is returned when an event id already in the log is
// reused by a different append.
var ErrDuplicateEventID = &domain.Error{Kind: domain.ErrConflict, Code: "duplicate_event_id",
	Message: "an event id in this append already belongs to a different event"}

// ErrNotAppended marks an Append error after which nothing of the append
// is or will be in the log: the store never sent it to the database, or
// the database refused it and rolled it back. A store that cannot tell
// leaves its errors unmarked.
var ErrNotAppended = errors.New("nothing was appended")

// DefaultBatch is the batch size used by readers that do not choose one.
const DefaultBatch = 1000

// CatchUp implements Subscribe for any store on top of ReadAll and
// WaitForEvents.
func CatchUp(ctx context.Context, s Store, after uint64, batch int, handle Handler) error {
	if batch <= 0 {
		batch = DefaultBatch
	}
	pos := after
	for {
		evs, err := s.ReadAll(ctx, pos, batch)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(evs) == 0 {
			if err := s.WaitForEvents(ctx, pos); err != nil {
				if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
					return nil
				}
				return err
			}
			continue
		}
		if err := handle(ctx, evs); err != nil {
			return err
		}
		pos = evs[len(evs)-1].Position
	}
}
