package tileflight

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Options configure a Group.
type Options struct {
	// Start bounds a flight's work: given a context that keeps the values
	// of the caller that started the flight but none of its cancellation
	// or deadline, it returns the work's context, ended at the work's
	// time limit (counted from now), and its cancel. Required.
	Start func(context.Context) (context.Context, context.CancelFunc)
	// TimedOut reports whether a flight's error is its time limit's (a
	// caller that joined such a flight may start one more). Without it,
	// an error is the limit's when it is context.DeadlineExceeded or the
	// work's context had passed its deadline.
	TimedOut func(error) bool
}

// Group runs at most one flight per key at a time. Safe for concurrent
// use; the zero Group is not usable (New).
type Group[K comparable, V any] struct {
	opts    Options
	mu      sync.Mutex
	flights map[K]*flight[V]
}

// flight is one run of the work of a key.
type flight[V any] struct {
	done     chan struct{} // closed once val, err and timedOut are set
	val      V
	err      error
	timedOut bool
	cancel   context.CancelFunc
	waiters  int // guarded by Group.mu
}

// New returns a Group whose flights are bounded by opts.Start.
func New[K comparable, V any](opts Options) (*Group[K, V], error) {
	if opts.Start == nil {
		return nil, errors.New("tileflight: no Start")
	}
	return &Group[K, V]{opts: opts, flights: map[K]*flight[V]{}}, nil
}

// Do returns the value of key's flight, starting one running work unless
// one is in flight. The caller waits under ctx: when ctx ends first, Do
// returns ctx's error at once (wrapped), and the flight goes on for the
// others, or is cancelled when none is left. A caller that joined a
// flight another started, and saw it fail at its time limit, starts (or
// joins) at most one more. work's context is the flight's (Options.Start).
func (g *Group[K, V]) Do(ctx context.Context, key K, work func(context.Context) (V, error)) (V, error) {
	f, started := g.join(ctx, key, work)
	v, err := g.wait(ctx, key, f)
	if err != nil && !started && ctx.Err() == nil && f.timedOut {
		f, _ = g.join(ctx, key, work)
		v, err = g.wait(ctx, key, f)
	}
	return v, err
}

// join counts the caller as a waiter of key's flight, starting one when
// none is in flight (started).
func (g *Group[K, V]) join(ctx context.Context, key K, work func(context.Context) (V, error)) (*flight[V], bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.flights[key]; ok {
		f.waiters++
		return f, false
	}
	wctx, cancel := g.opts.Start(context.WithoutCancel(ctx))
	f := &flight[V]{done: make(chan struct{}), cancel: cancel, waiters: 1}
	g.flights[key] = f
	go g.run(wctx, key, f, work)
	return f, true
}

// run runs the work of f and files its outcome.
func (g *Group[K, V]) run(ctx context.Context, key K, f *flight[V], work func(context.Context) (V, error)) {
	defer f.cancel()
	defer close(f.done)
	returned := false
	defer func() {
		// A work that panics or exits its goroutine (runtime.Goexit, as
		// t.FailNow does) gives its waiters an error, never a zero value.
		if r := recover(); r != nil {
			f.err = fmt.Errorf("tileflight: the work panicked: %v", r)
		} else if !returned {
			f.err = errors.New("tileflight: the work exited without returning")
		}
		g.mu.Lock()
		if g.flights[key] == f {
			delete(g.flights, key)
		}
		g.mu.Unlock()
	}()
	f.val, f.err = work(ctx)
	returned = true
	if f.err != nil {
		f.timedOut = g.timedOut(ctx, f.err)
	}
}

func (g *Group[K, V]) timedOut(ctx context.Context, err error) bool {
	if g.opts.TimedOut != nil && g.opts.TimedOut(err) {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// wait waits for f under ctx; a caller that leaves first is no longer
// counted, and the last to leave cancels the flight (and forgets it, so
// the next caller starts afresh).
func (g *Group[K, V]) wait(ctx context.Context, key K, f *flight[V]) (V, error) {
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
	}
	g.mu.Lock()
	f.waiters--
	if f.waiters == 0 {
		f.cancel()
		if g.flights[key] == f {
			delete(g.flights, key)
		}
	}
	g.mu.Unlock()
	var zero V
	return zero, fmt.Errorf("waiting for a flight: %w", context.Cause(ctx))
}
