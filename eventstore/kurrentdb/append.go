package kurrentdb

import (
	"context"
	"fmt"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/arr-dev/arr/eventstore"
)

// Append writes events to one stream atomically under an expected version.
//
// It first reads the stream's tail: if the events' ids already sit there (at
// the place the expectation names, or among the last DuplicateWindow events
// for Any and StreamExists), the append is a retry and returns the first
// result with Duplicate set; if the expectation already fails it returns
// *eventstore.WrongExpectedVersionError without writing. Otherwise it
// appends (KurrentDB checks the expectation again, atomically, and
// deduplicates by event id) and reads the events back for their positions.
// Two identical appends racing each other write the events once, but both
// may report Duplicate=false. If ctx ends mid-append the events may still
// commit; retry with the same ids.
func (s *Store) Append(ctx context.Context, streamID string, expected eventstore.ExpectedVersion, events ...eventstore.NewEvent) (eventstore.AppendResult, error) {
	a := eventstore.Append{StreamID: streamID, Expected: expected, Events: events}
	if err := validate(a); err != nil {
		return eventstore.AppendResult{}, err
	}
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	t, err := s.readTail(ctx, streamID, s.window(expected, len(events)))
	if err != nil {
		return eventstore.AppendResult{}, fmt.Errorf("append to %s: %w", streamID, err)
	}
	if dup, ok, err := s.probe(ctx, a, t); err != nil || ok {
		return dup, err
	}
	if !expected.Check(t.last, t.exists) {
		return eventstore.AppendResult{}, &eventstore.WrongExpectedVersionError{StreamID: streamID, Expected: expected, Actual: t.last, ActualExists: t.exists}
	}
	return s.write(ctx, a)
}

// write appends a's events under a's expectation and reads them back.
func (s *Store) write(ctx context.Context, a eventstore.Append) (eventstore.AppendResult, error) {
	data, err := toEventData(a.Events)
	if err != nil {
		return eventstore.AppendResult{}, fmt.Errorf("append to %s: %w", a.StreamID, err)
	}
	opts := esdb.AppendToStreamOptions{ExpectedRevision: toRevision(a.Expected)}
	if d, ok := ctx.Deadline(); ok {
		left := max(time.Until(d), time.Millisecond)
		opts.Deadline = &left // else the client's own 10s default applies
	}
	wr, err := call(ctx, s.conn, func(c *esdb.Client) (*esdb.WriteResult, error) {
		return c.AppendToStream(ctx, a.StreamID, opts, data...)
	})
	if isCode(err, esdb.ErrorCodeWrongExpectedVersion) {
		if a.Expected.IsAny() {
			// Any cannot conflict: KurrentDB refuses it only when some of
			// the ids were appended to this stream before and some not.
			return eventstore.AppendResult{}, fmt.Errorf("append to %s: %w", a.StreamID, eventstore.ErrDuplicateEventID)
		}
		return eventstore.AppendResult{}, s.wrongVersion(ctx, a, err)
	}
	if err != nil {
		return eventstore.AppendResult{}, callErr(ctx, fmt.Sprintf("append to %s (it may still commit; retry with the same event ids)", a.StreamID), err)
	}
	k := uint64(len(a.Events))
	if wr.NextExpectedVersion+1 < k {
		return eventstore.AppendResult{}, fmt.Errorf("append to %s: server reports stream version %d after appending %d events", a.StreamID, wr.NextExpectedVersion, k)
	}
	from := wr.NextExpectedVersion + 1 - k
	raw, _, err := s.readStream(ctx, a.StreamID, esdb.ReadStreamOptions{Direction: esdb.Forwards, From: esdb.Revision(from)}, len(a.Events))
	if err != nil {
		return eventstore.AppendResult{}, fmt.Errorf("append to %s committed at versions %d..%d; reading it back: %w", a.StreamID, from, wr.NextExpectedVersion, err)
	}
	if _, m := matchIDs(recordedIDs(raw), eventIDs(a.Events)); m != idsPresent {
		return eventstore.AppendResult{}, fmt.Errorf("append to %s: the events at versions %d..%d are not the ones appended", a.StreamID, from, wr.NextExpectedVersion)
	}
	return resultOf(a.StreamID, raw)
}

// wrongVersion builds the typed error for a refused append, taking the
// stream's actual version from the server's message or, failing that, from
// the stream itself.
func (s *Store) wrongVersion(ctx context.Context, a eventstore.Append, cause error) error {
	w := &eventstore.WrongExpectedVersionError{StreamID: a.StreamID, Expected: a.Expected}
	var ok bool
	if w.Actual, w.ActualExists, ok = currentRevision(cause.Error()); !ok {
		if t, err := s.readTail(ctx, a.StreamID, 1); err == nil {
			w.Actual, w.ActualExists = t.last, t.exists
		}
	}
	return w
}

func toEventData(events []eventstore.NewEvent) ([]esdb.EventData, error) {
	out := make([]esdb.EventData, len(events))
	for i, e := range events {
		md, err := encodeMetadata(e.Metadata, e.SchemaVersion)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
		data := []byte(e.Data)
		if len(data) == 0 {
			data = []byte("{}")
		}
		out[i] = esdb.EventData{EventID: e.ID, EventType: e.Type, ContentType: esdb.ContentTypeJson, Data: data, Metadata: md}
	}
	return out, nil
}

func resultOf(streamID string, evs []*esdb.RecordedEvent) (eventstore.AppendResult, error) {
	first, last := evs[0], evs[len(evs)-1]
	for _, e := range []*esdb.RecordedEvent{first, last} {
		if _, err := convert(e); err != nil {
			return eventstore.AppendResult{}, fmt.Errorf("append to %s: %w", streamID, err)
		}
	}
	return eventstore.AppendResult{
		StreamID:      streamID,
		FirstVersion:  first.EventNumber,
		LastVersion:   last.EventNumber,
		FirstPosition: first.Position.Commit,
		LastPosition:  last.Position.Commit,
	}, nil
}
