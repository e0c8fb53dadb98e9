package kurrentdb

import (
	"context"
	"fmt"

	"github.com/arr-dev/arr/eventstore"
)

// AppendBulk writes the appends one after another, in order, one
// AppendToStream each.
//
// It is NOT atomic across streams: KurrentDB has no multi-stream
// transactions. What it does instead: before writing anything it reads every
// stream's head, recognises appends already in the log (a retry), and checks
// every other expectation against the heads as the earlier appends of the
// bulk will leave them, failing with *eventstore.WrongExpectedVersionError
// before the first write if one is already wrong. A concurrent writer or a
// crash between that check and the last append can still leave a prefix of
// the bulk written; retrying the same bulk is then safe: appends already in
// the log return their first results with Duplicate set and the rest are
// written. Each append must fit the server's MaxAppendSize (1 MiB by
// default). CallTimeout bounds each step, not the whole bulk.
func (s *Store) AppendBulk(ctx context.Context, appends []eventstore.Append) ([]eventstore.AppendResult, error) {
	if len(appends) == 0 {
		return nil, nil
	}
	for _, a := range appends {
		if err := validate(a); err != nil {
			return nil, err
		}
	}
	results, dup, err := s.planBulk(ctx, appends)
	if err != nil {
		return nil, err
	}
	for i, a := range appends {
		if dup[i] {
			continue
		}
		cctx, cancel := s.callCtx(ctx)
		results[i], err = s.write(cctx, a)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("bulk append: appends before #%d (of %d) are in the log, #%d to %s failed: %w", i, len(appends), i, a.StreamID, err)
		}
	}
	return results, nil
}

// head is a stream as the bulk will leave it, append by append.
type head struct {
	tail   tail
	last   uint64
	exists bool
}

// planBulk reads each stream's tail once, finds the appends already in the
// log and checks the expectations of the others in order.
func (s *Store) planBulk(ctx context.Context, appends []eventstore.Append) ([]eventstore.AppendResult, []bool, error) {
	want := map[string]int{} // events of the stream's tail to read
	var order []string
	for _, a := range appends {
		if _, ok := want[a.StreamID]; !ok {
			order = append(order, a.StreamID)
		}
		want[a.StreamID] += s.window(a.Expected, len(a.Events))
	}
	heads := make(map[string]*head, len(order))
	for _, id := range order {
		cctx, cancel := s.callCtx(ctx)
		t, err := s.readTail(cctx, id, want[id])
		cancel()
		if err != nil {
			return nil, nil, fmt.Errorf("bulk append to %s: %w", id, err)
		}
		heads[id] = &head{tail: t, last: t.last, exists: t.exists}
	}
	results := make([]eventstore.AppendResult, len(appends))
	dup := make([]bool, len(appends))
	for i, a := range appends {
		h := heads[a.StreamID]
		cctx, cancel := s.callCtx(ctx)
		r, ok, err := s.probe(cctx, a, h.tail)
		cancel()
		if err != nil {
			return nil, nil, fmt.Errorf("bulk append: %w", err)
		}
		if ok {
			results[i], dup[i] = r, true
			continue
		}
		if !a.Expected.Check(h.last, h.exists) {
			return nil, nil, &eventstore.WrongExpectedVersionError{StreamID: a.StreamID, Expected: a.Expected, Actual: h.last, ActualExists: h.exists}
		}
		if h.exists {
			h.last += uint64(len(a.Events))
		} else {
			h.last, h.exists = uint64(len(a.Events))-1, true
		}
	}
	return results, dup, nil
}
