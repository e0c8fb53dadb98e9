package tileflight_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arr-dev/arr/readapi/recordsapi/tileflight"
)

func group(t *testing.T, limit time.Duration) *tileflight.Group[string, int] {
	t.Helper()
	g, err := tileflight.New[string, int](tileflight.Options{Start: func(ctx context.Context) (context.Context, context.CancelFunc) {
		return context.WithTimeout(ctx, limit)
	}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestFirstCallerHangsUp: the caller that started the flight leaves (its
// context is cancelled); the others still get the value, made once.
func TestFirstCallerHangsUp(t *testing.T) {
	g := group(t, 10*time.Second)
	release := make(chan struct{})
	var runs atomic.Int32
	work := func(ctx context.Context) (int, error) {
		runs.Add(1)
		select {
		case <-release:
			return 7, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	first, cancel := context.WithCancel(context.Background())
	firstErr := make(chan error, 1)
	go func() { _, err := g.Do(first, "k", work); firstErr <- err }()
	for runs.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	got := make([]int, 3)
	errs := make([]error, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = g.Do(context.Background(), "k", work)
		}()
	}
	for tileflight.Waiting(g, "k") < 4 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("the first caller's error = %v, want its cancellation", err)
	}
	close(release)
	wg.Wait()
	for i := range 3 {
		if errs[i] != nil || got[i] != 7 {
			t.Errorf("waiter %d: %d, %v; want 7", i, got[i], errs[i])
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the work ran %d times, want once", n)
	}
}

// TestLastCallerLeavingCancels: the work is cancelled once every caller
// has left, and the next caller starts a new flight.
func TestLastCallerLeavingCancels(t *testing.T) {
	g := group(t, 10*time.Second)
	cancelled := make(chan struct{})
	var runs atomic.Int32
	work := func(ctx context.Context) (int, error) {
		if runs.Add(1) > 1 {
			return 2, nil
		}
		<-ctx.Done()
		close(cancelled)
		return 0, ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = g.Do(ctx, "k", work) }()
	}
	for tileflight.Waiting(g, "k") < 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	wg.Wait()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the work was not cancelled after its last caller left")
	}
	if v, err := g.Do(context.Background(), "k", work); err != nil || v != 2 {
		t.Fatalf("after the cancelled flight: %d, %v; want a new flight's 2", v, err)
	}
}

// TestWorkDetachedFromFirstDeadline: the work runs under the group's
// limit, not the first caller's deadline: a caller whose deadline is
// shorter than the work leaves with its deadline, and one that joined
// gets the value.
func TestWorkDetachedFromFirstDeadline(t *testing.T) {
	g := group(t, 10*time.Second)
	work := func(ctx context.Context) (int, error) {
		select {
		case <-time.After(300 * time.Millisecond):
			return 5, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	firstErr := make(chan error, 1)
	go func() { _, err := g.Do(short, "k", work); firstErr <- err }()
	time.Sleep(10 * time.Millisecond)
	v, err := g.Do(context.Background(), "k", work)
	if err != nil || v != 5 {
		t.Fatalf("the second caller: %d, %v; want 5", v, err)
	}
	if err := <-firstErr; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the first caller: %v, want its own deadline", err)
	}
}

// TestTimedOutFlightRetriedOnce: a caller that joined a flight that
// failed at its limit starts one more (which may succeed); the caller
// that started it gets the limit's error; a second time-out is final.
func TestTimedOutFlightRetriedOnce(t *testing.T) {
	g := group(t, 500*time.Millisecond)
	var runs atomic.Int32
	slow := func(ctx context.Context) (int, error) {
		n := runs.Add(1)
		if n == 2 {
			return 9, nil
		}
		<-ctx.Done()
		return 0, ctx.Err()
	}
	firstErr := make(chan error, 1)
	go func() { _, err := g.Do(context.Background(), "k", slow); firstErr <- err }()
	for runs.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	v, err := g.Do(context.Background(), "k", slow)
	if err != nil || v != 9 {
		t.Fatalf("the joined caller: %d, %v; want the retry's 9", v, err)
	}
	if err := <-firstErr; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the starter: %v, want the limit's error", err)
	}
	runs.Store(10) // every run from now on times out
	go func() { _, err := g.Do(context.Background(), "j", slow); firstErr <- err }()
	for runs.Load() == 10 {
		time.Sleep(time.Millisecond)
	}
	if _, err := g.Do(context.Background(), "j", slow); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second time-out: %v, want the limit's error", err)
	}
	<-firstErr
	if n := runs.Load(); n != 12 {
		t.Errorf("%d runs of j, want 2 (one flight and one retry)", n-10)
	}
}

// TestPanicIsAnError: a panic in the work is every waiter's error, not the
// process's end.
func TestPanicIsAnError(t *testing.T) {
	g := group(t, time.Second)
	if _, err := g.Do(context.Background(), "k", func(context.Context) (int, error) { panic("boom") }); err == nil {
		t.Fatal("a panicking work returned no error")
	}
}
