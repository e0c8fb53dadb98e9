package complete_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/commands/complete"
)

// TestSingleFlight: identical cacheable requests in flight together make
// one upstream call, whose first caller may leave without failing the
// others; streams do not join.
func TestSingleFlight(t *testing.T) {
	zero := map[string]any{"temperature": 0}
	for _, tc := range []struct {
		name          string
		body          map[string]any
		leaderLeaves  bool
		followers     int
		wantCalls     int
		wantCacheHits int
	}{
		{name: "followers are cache hits", body: zero, followers: 7, wantCalls: 1, wantCacheHits: 7},
		{name: "the first caller leaves", body: zero, leaderLeaves: true, followers: 3, wantCalls: 1, wantCacheHits: 3},
		{name: "streams do not join", body: map[string]any{"temperature": 0, "stream": true}, followers: 2, wantCalls: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := newHarness(t, options{startChain: true})
			hs.up.Set("", upstreamtest.Behavior{Latency: 600 * time.Millisecond})
			r := request(t, "Share me", tc.body)
			run := func(ctx context.Context) (complete.Result, error) {
				return hs.h.Handle(ctx, complete.Command{Caller: hs.caller, Request: r, Cache: complete.CacheAuto, RequestID: "req-" + uuid.NewString()})
			}
			lctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			leader := make(chan error, 1)
			go func() {
				res, err := run(lctx)
				if err == nil && res.Stream != nil {
					_, err = drain(t, res.Stream)
				}
				leader <- err
			}()
			time.Sleep(150 * time.Millisecond) // the leader's call is upstream
			if tc.leaderLeaves {
				cancel()
				if err := <-leader; !errors.Is(err, context.Canceled) {
					t.Fatalf("the leader that left: %v", err)
				}
			}
			var mu sync.Mutex
			hits := 0
			var wg sync.WaitGroup
			for range tc.followers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := run(context.Background())
					routing := res.Reply.Routing
					if err == nil && res.Stream != nil {
						_, err = drain(t, res.Stream)
						routing = res.Stream.Routing()
					}
					if err != nil && !errors.Is(err, io.EOF) {
						t.Errorf("follower: %v", err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if routing.CacheHit {
						hits++
					}
				}()
			}
			wg.Wait()
			if !tc.leaderLeaves {
				if err := <-leader; err != nil && !errors.Is(err, io.EOF) {
					t.Fatalf("leader: %v", err)
				}
			}
			if calls := hs.up.Calls("gpt-4.1-nano"); calls != tc.wantCalls || hits != tc.wantCacheHits {
				t.Fatalf("%d upstream calls, %d cache hits; want %d and %d", calls, hits, tc.wantCalls, tc.wantCacheHits)
			}
		})
	}
}

// TestSingleFlightFailure: a failed call fails everyone waiting for it
// (each candidate tried once), and the next request calls again.
func TestSingleFlightFailure(t *testing.T) {
	hs := newHarness(t, options{startChain: true})
	hs.up.Set("", upstreamtest.Behavior{Latency: 400 * time.Millisecond, Status: 503})
	r := request(t, "Fail me", map[string]any{"temperature": 0})
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = hs.complete(t, r, complete.CacheAuto)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		var uf *complete.UpstreamFailure
		if !errors.As(err, &uf) {
			t.Fatalf("request %d: %v, want an UpstreamFailure", i, err)
		}
	}
	if calls := hs.up.Calls("gpt-4.1-nano"); calls != 1 {
		t.Fatalf("5 identical failing requests called gpt-4.1-nano %d times, want once", calls)
	}
	hs.up.Reset()
	res, err := hs.complete(t, r, complete.CacheAuto)
	if err != nil || res.Reply.Routing.CacheHit || hs.up.Calls("gpt-4.1-nano") != 2 {
		t.Fatalf("after the failure: %+v %v", res.Reply.Routing, err)
	}
	if st := hs.h.CacheStats(); st.Misses != 2 || st.Coalesced != 0 {
		t.Fatalf("cache stats %+v: want 2 misses (the failed flight and the retry)", st)
	}
}
