package projections

import (
	"context"
	"sync"
	"time"
)

// batchClock is the time a batch transaction gets: its context ends
// (with cause context.DeadlineExceeded) once the timeout has passed since
// the batch began, and extend may push that end back once the batch's
// events are known (Spec.BatchTimeout), never forward.
type batchClock struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	start  time.Time
	mu     sync.Mutex
	timer  *time.Timer
	limit  time.Duration
}

// newBatchClock starts a batch's clock of timeout; parent's cancellation
// does not reach the batch (it runs to completion or to its timeout).
func newBatchClock(parent context.Context, timeout time.Duration) *batchClock {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	c := &batchClock{ctx: ctx, cancel: cancel, start: time.Now(), limit: timeout}
	c.timer = time.AfterFunc(timeout, func() { cancel(context.DeadlineExceeded) })
	return c
}

// extend gives the batch timeout in all (from its start) when that is
// more than it has and the clock has not run out yet.
func (c *batchClock) extend(timeout time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if timeout <= c.limit || !c.timer.Stop() {
		return
	}
	c.limit = timeout
	c.timer.Reset(max(0, timeout-time.Since(c.start)))
}

// timeout is the time the batch has in all.
func (c *batchClock) timeout() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit
}

// ranOut says the batch's time ran out.
func (c *batchClock) ranOut() bool {
	return context.Cause(c.ctx) == context.DeadlineExceeded
}

// stop releases the clock.
func (c *batchClock) stop() {
	c.timer.Stop()
	c.cancel(context.Canceled)
}
