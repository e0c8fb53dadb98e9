package eventstore

import (
	"context"
	"slices"
	"time"
)

// Filter selects events of the log by their envelope; an event matches
// when every condition set holds. The zero Filter matches every event.
type Filter struct {
	// Types keeps events of any of these types (all types when empty).
	Types []string
	// Stream keeps the events of this one stream ("": every stream).
	Stream string
	// Since keeps events recorded at or after it (zero: no bound).
	Since time.Time
	// Until keeps events recorded before it (zero: no bound).
	Until time.Time
}

// Match reports whether e passes the filter.
func (f Filter) Match(e Event) bool {
	return (len(f.Types) == 0 || slices.Contains(f.Types, e.Type)) &&
		(f.Stream == "" || e.StreamID == f.Stream) &&
		(f.Since.IsZero() || !e.RecordedAt.Before(f.Since)) &&
		(f.Until.IsZero() || e.RecordedAt.Before(f.Until))
}

// FilterReader is a Store that applies a Filter where the events are, so
// that a reader of few events neither transfers nor decodes the rest.
type FilterReader interface {
	// ReadFiltered reads, in position order, at most limit events with
	// a position in (after, upTo] that match f. Fewer than limit means
	// none is left up to upTo. upTo must not pass the head.
	ReadFiltered(ctx context.Context, after, upTo uint64, limit int, f Filter) ([]Event, error)
}
