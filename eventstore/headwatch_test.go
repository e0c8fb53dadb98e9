package eventstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arr-dev/arr/eventstore"
)

func TestHeadWatch(t *testing.T) {
	tests := []struct {
		name    string
		act     func(w *eventstore.HeadWatch, polled *atomic.Uint64)
		wantErr error
	}{
		{"an announcement past the position wakes the waiter", func(w *eventstore.HeadWatch, _ *atomic.Uint64) { w.Announce(11) }, nil},
		{"a lost announcement is found by the poll", func(_ *eventstore.HeadWatch, p *atomic.Uint64) { p.Store(11) }, nil},
		{"close ends the wait", func(w *eventstore.HeadWatch, _ *atomic.Uint64) { w.Close() }, eventstore.ErrClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := eventstore.NewHeadWatch()
			var polled atomic.Uint64
			polled.Store(10)
			head := func(context.Context) (uint64, error) { return polled.Load(), nil }
			done := make(chan error, 1)
			go func() { done <- w.Wait(context.Background(), 10, 5*time.Millisecond, head, nil) }()
			w.Announce(10) // not past the position: the waiter keeps waiting
			tc.act(w, &polled)
			select {
			case err := <-done:
				if !errors.Is(err, tc.wantErr) && err != tc.wantErr {
					t.Fatalf("Wait = %v, want %v", err, tc.wantErr)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("Wait did not return")
			}
		})
	}
	w := eventstore.NewHeadWatch()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := w.Wait(ctx, 5, time.Millisecond, func(context.Context) (uint64, error) { return 5, nil }, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with no new events = %v, want deadline exceeded", err)
	}
}
