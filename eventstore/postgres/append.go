package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/arr-dev/arr/eventstore"
)

type request struct {
	append eventstore.Append
	done   chan response
}

type response struct {
	result eventstore.AppendResult
	err    error
}

// Append queues the append for the writer, which commits it together with
// whatever other appends are waiting (group commit), each under its own
// expected-version check. If ctx ends while the append is in flight, the
// append may still commit; retrying with the same event ids is safe.
func (s *Store) Append(ctx context.Context, streamID string, expected eventstore.ExpectedVersion, events ...eventstore.NewEvent) (eventstore.AppendResult, error) {
	a := eventstore.Append{StreamID: streamID, Expected: expected, Events: events}
	if err := a.Validate(true); err != nil {
		return eventstore.AppendResult{}, err
	}
	req := &request{append: a, done: make(chan response, 1)}
	select {
	case s.queue <- req:
	case <-ctx.Done():
		return eventstore.AppendResult{}, notAppended{ctx.Err()}
	case <-s.stop:
		return eventstore.AppendResult{}, notAppended{errStoreClosed}
	}
	select {
	case r := <-req.done:
		return r.result, r.err
	case <-ctx.Done():
		return eventstore.AppendResult{}, fmt.Errorf("append to %s: %w (it may still commit; retry with the same event ids)", streamID, ctx.Err())
	}
}

// writer is the single goroutine that turns queued appends into group
// commits: it takes one request, then everything else already waiting, up
// to MaxBatchEvents.
func (s *Store) writer() {
	defer close(s.done)
	for {
		var first *request
		select {
		case first = <-s.queue:
		case <-s.stop:
			s.failQueued()
			return
		}
		batch := []*request{first}
		n := len(first.append.Events)
	drain:
		for n < s.cfg.MaxBatchEvents {
			select {
			case r := <-s.queue:
				batch = append(batch, r)
				n += len(r.append.Events)
			default:
				break drain
			}
		}
		s.commitBatch(batch)
	}
}

// errStoreClosed fails appends made or queued after Close.
var errStoreClosed = errors.New("event store closed")

// notAppended is an append error after which nothing was written: it
// wraps eventstore.ErrNotAppended beside the cause, and reads as the cause.
type notAppended struct{ err error }

func (e notAppended) Error() string   { return e.err.Error() }
func (e notAppended) Unwrap() []error { return []error{e.err, eventstore.ErrNotAppended} }

func (s *Store) failQueued() {
	for {
		select {
		case r := <-s.queue:
			r.done <- response{err: notAppended{errStoreClosed}}
		default:
			return
		}
	}
}

func (s *Store) commitBatch(batch []*request) {
	ctx, cancel := context.WithTimeout(s.commits, s.cfg.CommitTimeout)
	defer cancel()
	appends := make([]eventstore.Append, len(batch))
	for i, r := range batch {
		appends[i] = r.append
	}
	results, errs, err := s.commit(ctx, appends, false)
	for i, r := range batch {
		switch {
		case errs[i] != nil:
			r.done <- response{err: errs[i]}
		case err != nil:
			r.done <- response{err: err}
		default:
			r.done <- response{result: results[i]}
		}
	}
}
