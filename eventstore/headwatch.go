package eventstore

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrClosed is returned by a store (and a HeadWatch wait) after Close.
var ErrClosed = errors.New("event store closed")

// HeadWatch tracks the highest log position a store has been told about (by
// LISTEN/NOTIFY, a live subscription, a poll) and wakes everyone waiting for
// the log to pass a position. Implementations of Store.WaitForEvents share
// it. Safe for concurrent use.
type HeadWatch struct {
	mu      sync.Mutex
	head    uint64
	changed chan struct{}
	closed  bool
}

// NewHeadWatch returns a watch that knows no position yet.
func NewHeadWatch() *HeadWatch { return &HeadWatch{changed: make(chan struct{})} }

// Announce records that the log holds position pos (0 means "something may
// have changed": waiters re-check) and wakes the waiters.
func (w *HeadWatch) Announce(pos uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if pos > w.head {
		w.head = pos
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

// Close wakes every waiter; their waits return ErrClosed.
func (w *HeadWatch) Close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.Announce(0)
}

// Wait returns once a position after `after` has been announced, checking
// head at once and then every poll interval in case an announcement was
// lost. onPollErr hears failed polls. It returns ctx's error when ctx ends
// and ErrClosed after Close.
func (w *HeadWatch) Wait(ctx context.Context, after uint64, poll time.Duration, head func(context.Context) (uint64, error), onPollErr func(error)) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		w.mu.Lock()
		known, ch, closed := w.head, w.changed, w.closed
		w.mu.Unlock()
		if known > after {
			return nil
		}
		if closed {
			return ErrClosed
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		case <-t.C:
			h, err := head(ctx)
			switch {
			case err != nil && ctx.Err() != nil:
				return ctx.Err()
			case err != nil:
				if onPollErr != nil {
					onPollErr(err)
				}
			case h > after:
				w.Announce(h)
				return nil
			}
			t.Reset(poll)
		}
	}
}
