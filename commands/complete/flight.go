package complete

import (
	"context"
	"fmt"
	"runtime/debug"

	"golang.org/x/sync/singleflight"

	"github.com/arr-dev/arr/adapters/upstream"
)

// Single flight: concurrent identical cacheable requests (one cache key:
// the account and the body but for stream and stream_options) make one
// upstream call. The first is the leader: its completion is the call's,
// recorded with the cost. Those that arrive while the call is in flight
// wait for it and are answered as cache hits (no upstream call, no cost,
// each recorded in the audit chain with its own entry), like a request
// that arrives after the reply was cached.
//
//   - The call runs detached from the leader's context (as the answer
//     service's research does): a leader that goes away does not fail the
//     others, and the reply is still cached. It is bounded by the upstream
//     timeout per model tried. Each waiter leaves when its own context
//     ends. The leader's completion, whose upstream call was made and
//     paid, is recorded (with its cost) by the flight itself, so a client
//     that disconnects before the reply is still charged for the call it
//     caused; otherwise it could have a reply cached for nothing and read
//     it as a free cache hit.
//   - A call that fails (every candidate failed, or an upstream refused
//     the request) fails every waiter with the same error, as retrying it
//     once per waiter would multiply the load on an upstream that is
//     failing; the failure is not remembered, so the next request calls
//     again.
//   - A reply the cache does not keep (more than one choice, or a
//     finish_reason other than stop or length) is the leader's only: each
//     waiter then calls the upstream itself.
//   - Streamed requests do not join: a stream that waited for another
//     request's call would get its first token only when the whole reply
//     is done. They are answered from the cache when it has the reply.

// flown is the outcome of a flight.
type flown struct {
	// by is the completion the flight ran for; called says it called the
	// upstream (else it found the reply cached).
	by       *call
	called   bool
	resp     *upstream.Response
	attempts int
	reply    upstreamReply
	// rep and recorded are the leader's reply as recorded, when called.
	rep      Reply
	recorded error
}

// flight answers the cacheable non-streamed completion k, whose reply is
// not cached: it makes the upstream call for k and any identical request
// that arrives meanwhile, or waits for the call such a request is making.
func (h *Handler) flight(ctx context.Context, k *call) (Result, error) {
	ch := h.flights.DoChan(k.key, func() (v any, err error) {
		defer func() {
			if p := recover(); p != nil {
				h.cfg.Logger.Error("completion panicked", "panic", p, "stack", string(debug.Stack()), "request_id", k.md.RequestID)
				err = fmt.Errorf("complete: the upstream call failed: %v", p)
			}
		}()
		return h.fly(context.WithoutCancel(ctx), k)
	})
	var out singleflight.Result
	select {
	case out = <-ch:
	case <-ctx.Done():
		// The flight may still be making this call's upstream call: it
		// is settled when the flight lands, with what it cost.
		k.spend.deferred = true
		go func() {
			<-ch
			k.settle(context.WithoutCancel(ctx))
		}()
		return Result{}, ctx.Err()
	}
	if out.Err != nil {
		return Result{}, out.Err
	}
	f := out.Val.(*flown)
	switch {
	case f.by == k && f.called:
		return Result{Reply: f.rep}, f.recorded
	case f.by == k: // found cached, counted by get
	case !f.reply.cacheable:
		h.cache.missed()
		resp, attempts, err := h.dispatch(ctx, k)
		if err != nil {
			return Result{}, err
		}
		rep, err := h.reply(ctx, k, resp, attempts)
		return Result{Reply: rep}, err
	default:
		h.cache.shared()
	}
	return h.serveCached(ctx, k, nil, f.reply.entry)
}

// fly is a flight's work, for the leader k: the reply if it was cached
// meanwhile (a flight that ended just before this one began), else the
// upstream call, its reply read and cached.
func (h *Handler) fly(ctx context.Context, k *call) (*flown, error) {
	if hit, ok := h.cache.get(k.key, h.cfg.Clock()); ok {
		return &flown{by: k, reply: upstreamReply{cacheable: true, entry: hit}}, nil
	}
	h.cache.missed()
	resp, attempts, err := h.dispatch(ctx, k)
	if err != nil {
		return nil, err
	}
	r, err := h.readReply(k, resp)
	if err != nil {
		return nil, err
	}
	if r.cacheable {
		h.cache.put(k.key, r.entry)
	}
	f := &flown{by: k, called: true, resp: resp, attempts: attempts, reply: r}
	f.rep, f.recorded = h.recordReply(ctx, k, resp, attempts, r)
	return f, nil
}
