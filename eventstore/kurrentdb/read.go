package kurrentdb

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/arr-dev/arr/eventstore"
)

// maxPage caps the events asked for in one read of $all.
const maxPage = 4096

// headPage is the page size of backward scans of $all.
const headPage = 256

// ReadStream reads one stream forward or backward. A stream that does not
// exist reads as empty.
func (s *Store) ReadStream(ctx context.Context, streamID string, o eventstore.ReadStreamOptions) ([]eventstore.Event, error) {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	limit := o.Limit
	if limit <= 0 {
		limit = eventstore.DefaultBatch
	}
	opts := esdb.ReadStreamOptions{Direction: esdb.Forwards, From: esdb.Revision(o.From)}
	switch {
	case o.Backward && o.FromEnd:
		opts = esdb.ReadStreamOptions{Direction: esdb.Backwards, From: esdb.End{}}
	case o.Backward:
		opts = esdb.ReadStreamOptions{Direction: esdb.Backwards, From: esdb.Revision(o.From)}
	}
	raw, _, err := s.readStream(ctx, streamID, opts, limit)
	if err != nil {
		return nil, err
	}
	if o.Backward && !o.FromEnd && (len(raw) == 0 || raw[0].EventNumber != o.From) {
		// From is past the end: KurrentDB reads the window below From, not
		// the last events. Read from the end instead (all are <= From).
		opts.From = esdb.End{}
		if raw, _, err = s.readStream(ctx, streamID, opts, limit); err != nil {
			return nil, err
		}
	}
	out := make([]eventstore.Event, 0, len(raw))
	for _, r := range raw {
		e, err := convert(r)
		if err != nil {
			return nil, fmt.Errorf("reading stream %s: %w", streamID, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// readStream reads up to n recorded events of a stream; exists is false when
// the stream is not there.
func (s *Store) readStream(ctx context.Context, streamID string, opts esdb.ReadStreamOptions, n int) ([]*esdb.RecordedEvent, bool, error) {
	evs, err := call(ctx, s.conn, func(c *esdb.Client) ([]*esdb.RecordedEvent, error) {
		rs, err := c.ReadStream(ctx, streamID, opts, uint64(n))
		if err != nil {
			return nil, err
		}
		defer rs.Close()
		return collect(rs, n)
	})
	if isCode(err, esdb.ErrorCodeResourceNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, callErr(ctx, "reading stream "+streamID, err)
	}
	return evs, true, nil
}

// readAll reads up to n recorded events of $all, system ones included.
func (s *Store) readAll(ctx context.Context, dir esdb.Direction, from esdb.AllPosition, n int) ([]*esdb.RecordedEvent, error) {
	return call(ctx, s.conn, func(c *esdb.Client) ([]*esdb.RecordedEvent, error) {
		rs, err := c.ReadAll(ctx, esdb.ReadAllOptions{Direction: dir, From: from}, uint64(n))
		if err != nil {
			return nil, err
		}
		defer rs.Close()
		return collect(rs, n)
	})
}

func collect(rs *esdb.ReadStream, n int) ([]*esdb.RecordedEvent, error) {
	out := make([]*esdb.RecordedEvent, 0, min(n, 1024))
	for {
		ev, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ev.OriginalEvent())
	}
}

// ReadAll reads the log after a position (exclusive), in order, skipping
// KurrentDB's own events. A position that is not one this store returned
// (not the start of a record) costs a backward scan from the end of the log
// to the nearest event at or before it.
func (s *Store) ReadAll(ctx context.Context, after uint64, limit int) ([]eventstore.Event, error) {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	if limit <= 0 {
		limit = eventstore.DefaultBatch
	}
	var from esdb.AllPosition = esdb.Start{}
	if after > 0 {
		from = esdb.Position{Commit: after, Prepare: after}
	}
	floor := esdb.Position{Commit: after, Prepare: after}
	out := make([]eventstore.Event, 0, min(limit, 1024))
	retried := false
	for len(out) < limit {
		// A start at an event's position includes that event: ask for one more.
		n := min(limit-len(out)+1, maxPage)
		raw, err := s.readAll(ctx, esdb.Forwards, from, n)
		if err != nil && isInvalidPosition(err) && !retried {
			retried = true
			if from, err = s.startAtOrBefore(ctx, after); err == nil {
				continue
			}
		}
		if err != nil {
			return nil, callErr(ctx, fmt.Sprintf("reading log after %d", after), err)
		}
		for _, r := range raw {
			if !later(r.Position, floor) {
				continue
			}
			floor = r.Position
			if isSystem(r.StreamID, r.EventType) {
				continue
			}
			if r.Position.Commit != r.Position.Prepare {
				return nil, fmt.Errorf("reading log after %d: event %d of %s was written in an explicit transaction (commit %d, prepare %d); this store needs one position per event", after, r.EventNumber, r.StreamID, r.Position.Commit, r.Position.Prepare)
			}
			e, err := convert(r)
			if err != nil {
				return nil, fmt.Errorf("reading log after %d: %w", after, err)
			}
			out = append(out, e)
			if len(out) == limit {
				break
			}
		}
		if len(raw) < n {
			break // end of the log
		}
		from = floor
	}
	return out, nil
}

// later reports whether p comes after q in $all order.
func later(p, q esdb.Position) bool {
	return p.Commit > q.Commit || (p.Commit == q.Commit && p.Prepare > q.Prepare)
}

// startAtOrBefore finds a valid start for a forward read of everything after
// pos: the position of the last record at or before it, or the start of the
// log.
func (s *Store) startAtOrBefore(ctx context.Context, pos uint64) (esdb.AllPosition, error) {
	var from esdb.AllPosition = esdb.End{}
	for {
		raw, err := s.readAll(ctx, esdb.Backwards, from, headPage)
		if err != nil {
			return nil, err
		}
		for _, r := range raw {
			if r.Position.Commit <= pos {
				return r.Position, nil
			}
		}
		if len(raw) < headPage {
			return esdb.Start{}, nil
		}
		from = raw[len(raw)-1].Position
	}
}

// Head returns the position of the last event that is not KurrentDB's own,
// 0 when there is none.
func (s *Store) Head(ctx context.Context) (uint64, error) {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	var from esdb.AllPosition = esdb.End{}
	for {
		raw, err := s.readAll(ctx, esdb.Backwards, from, headPage)
		if err != nil {
			return 0, callErr(ctx, "reading log head", err)
		}
		for _, r := range raw {
			if !isSystem(r.StreamID, r.EventType) {
				return r.Position.Commit, nil
			}
		}
		if len(raw) < headPage {
			return 0, nil
		}
		from = raw[len(raw)-1].Position
	}
}
