package kurrentdb

import (
	"context"
	"fmt"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
)

// window is how many of a stream's last events an append of n events reads
// before writing: its own n when the expectation names their place (Exact,
// NoStream), plus DuplicateWindow when it does not (Any, StreamExists).
func (s *Store) window(expected eventstore.ExpectedVersion, n int) int {
	if _, ok := expected.ExactVersion(); ok || expected.IsNoStream() {
		return n
	}
	return n + s.cfg.DuplicateWindow
}

// tail is the end of a stream as read before an append.
type tail struct {
	exists bool
	last   uint64                // version of the last event, when exists
	events []*esdb.RecordedEvent // the last events, in stream order
	full   bool                  // the read was cut by its count: older events may exist
}

func (s *Store) readTail(ctx context.Context, streamID string, n int) (tail, error) {
	raw, exists, err := s.readStream(ctx, streamID, esdb.ReadStreamOptions{Direction: esdb.Backwards, From: esdb.End{}}, n)
	if err != nil || !exists || len(raw) == 0 {
		return tail{}, err
	}
	for i, j := 0, len(raw)-1; i < j; i, j = i+1, j-1 {
		raw[i], raw[j] = raw[j], raw[i]
	}
	return tail{exists: true, last: raw[len(raw)-1].EventNumber, events: raw, full: len(raw) == n}, nil
}

// probe decides whether a is a retry of an append already in the stream.
// It returns the first result (ok), eventstore.ErrDuplicateEventID when only
// some of a's ids are there, or neither.
func (s *Store) probe(ctx context.Context, a eventstore.Append, t tail) (eventstore.AppendResult, bool, error) {
	ids := eventIDs(a.Events)
	first, m := matchIDs(recordedIDs(t.events), ids)
	switch {
	case m == idsPresent:
		return duplicate(a.StreamID, t.events[first:first+len(ids)])
	case m == idsPartial && first == 0 && t.full:
		// The run may start before the window: look at its exact place.
		if j := indexOf(ids, t.events[0].EventID); j > 0 && t.events[0].EventNumber >= uint64(j) {
			return s.probeAt(ctx, a, t.events[0].EventNumber-uint64(j))
		}
	case m == idsAbsent && t.exists:
		// An exact expectation names the place; look there if the window
		// did not reach it.
		slot, ok := a.Expected.ExactVersion()
		if ok {
			slot++
		} else if a.Expected.IsNoStream() {
			slot, ok = 0, true
		}
		if ok && slot <= t.last && slot < t.events[0].EventNumber {
			return s.probeAt(ctx, a, slot)
		}
		return eventstore.AppendResult{}, false, nil
	case m == idsAbsent:
		return eventstore.AppendResult{}, false, nil
	}
	return eventstore.AppendResult{}, false, fmt.Errorf("append to %s: %w", a.StreamID, eventstore.ErrDuplicateEventID)
}

// probeAt checks whether a's events sit at version `from` onwards.
func (s *Store) probeAt(ctx context.Context, a eventstore.Append, from uint64) (eventstore.AppendResult, bool, error) {
	raw, _, err := s.readStream(ctx, a.StreamID, esdb.ReadStreamOptions{Direction: esdb.Forwards, From: esdb.Revision(from)}, len(a.Events))
	if err != nil {
		return eventstore.AppendResult{}, false, fmt.Errorf("append to %s: %w", a.StreamID, err)
	}
	switch _, m := matchIDs(recordedIDs(raw), eventIDs(a.Events)); m {
	case idsPresent:
		return duplicate(a.StreamID, raw)
	case idsPartial:
		return eventstore.AppendResult{}, false, fmt.Errorf("append to %s: %w", a.StreamID, eventstore.ErrDuplicateEventID)
	}
	return eventstore.AppendResult{}, false, nil
}

func duplicate(streamID string, evs []*esdb.RecordedEvent) (eventstore.AppendResult, bool, error) {
	r, err := resultOf(streamID, evs)
	r.Duplicate = true
	return r, err == nil, err
}

func eventIDs(events []eventstore.NewEvent) []uuid.UUID {
	out := make([]uuid.UUID, len(events))
	for i, e := range events {
		out[i] = e.ID
	}
	return out
}

func recordedIDs(events []*esdb.RecordedEvent) []uuid.UUID {
	out := make([]uuid.UUID, len(events))
	for i, e := range events {
		out[i] = e.EventID
	}
	return out
}

func indexOf(ids []uuid.UUID, id uuid.UUID) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}
