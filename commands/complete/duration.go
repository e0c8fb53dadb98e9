package complete

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A completion's duration is capped (Config.MaxDuration): a stream that
// is still running then is cut, ends with a StreamCut whose cause is
// *DurationExceeded, is recorded and settles what it relayed. The key's
// reservation is renewed while the request runs (spend.Guard), so the
// cap is not what keeps a budget exact; it bounds how long one request
// can hold a reservation, a connection and an upstream.
//
// An Admitter may cut a request too (CutOf): a reservation whose lease
// could not be renewed in time is cut before the lease runs out, so that
// no request spends after its reservation was released.

// DurationExceeded is the cause of a request cut at Config.MaxDuration.
type DurationExceeded struct {
	Max time.Duration
}

func (e *DurationExceeded) Error() string {
	return fmt.Sprintf("the request ran for the gateway's longest request duration, %s (ARR_GATEWAY_MAX_REQUEST_DURATION), and was cut; what was relayed is billed, and the rest was not produced", e.Max)
}

// ErrReservationLost is the cause of a request an Admitter cut because
// its reservation could not be kept (its lease could not be renewed).
var ErrReservationLost = errors.New("the request's reservation of its key's limits could not be kept, so it was cut; what was relayed is billed")

// gatewayCut is the cause ctx was cut with by the gateway (the duration
// cap or a lost reservation), nil otherwise (not cut, or by the client).
func gatewayCut(ctx context.Context) error {
	cause := context.Cause(ctx)
	var d *DurationExceeded
	if errors.As(cause, &d) || errors.Is(cause, ErrReservationLost) {
		return cause
	}
	return nil
}

type cutterKey struct{}

// CutOf is how to cut the request of ctx with a cause (it cancels the
// request's context; the stream ends as cut, recorded and settled); nil
// outside a completion. Safe for concurrent use.
func CutOf(ctx context.Context) func(cause error) {
	f, _ := ctx.Value(cutterKey{}).(context.CancelCauseFunc)
	return f
}

// WithCut returns ctx carrying cut as the way to cut its request
// (CutOf): what a use case that admits through an Admitter gives it.
func WithCut(ctx context.Context, cut context.CancelCauseFunc) context.Context {
	return context.WithValue(ctx, cutterKey{}, cut)
}

// bounded returns ctx cut at max with *DurationExceeded (and by
// CutOf's function), and the function that ends it once the request is
// done.
func bounded(ctx context.Context, max time.Duration) (context.Context, func()) {
	ctx, cut := context.WithCancelCause(ctx)
	t := time.AfterFunc(max, func() { cut(&DurationExceeded{Max: max}) })
	return WithCut(ctx, cut), func() {
		t.Stop()
		cut(context.Canceled)
	}
}
