package ratelimit_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arr-dev/arr/readapi/ratelimit"
)

// batcher is one BatchLimiter implementation under test.
type batcher struct {
	name string
	new  func(t testing.TB) ratelimit.BatchLimiter
}

// batchers are the BatchLimiter implementations, on real servers.
func batchers() []batcher {
	return []batcher{
		{"postgres", func(t testing.TB) ratelimit.BatchLimiter { return newPostgres(t, time.Now) }},
		{"redis", func(t testing.TB) ratelimit.BatchLimiter { return newRedis(t, time.Now).(ratelimit.BatchLimiter) }},
	}
}

// takeAcrossBuckets sends, from every limiter at once, `each` requests to
// each of `buckets` buckets named prefix+index, and returns how many each
// bucket admitted. Any error fails the test.
func takeAcrossBuckets(t testing.TB, ls []ratelimit.Limiter, prefix string, buckets, each int, w ratelimit.Window, limit int64) []int64 {
	t.Helper()
	var wg sync.WaitGroup
	admitted := make([]atomic.Int64, buckets)
	errs := make(chan error, len(ls)*buckets*each)
	for round := 0; round < each; round++ {
		for _, l := range ls {
			for c := 0; c < buckets; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := l.Take(context.Background(), fmt.Sprintf("%s%d", prefix, c), w, limit)
					if err != nil {
						errs <- err
					} else if r.Allowed {
						admitted[c].Add(1)
					}
				}()
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	out := make([]int64, buckets)
	for c := range admitted {
		out[c] = admitted[c].Load()
	}
	return out
}

// TestTakeMany: each ask of a batch admits what its window has left, never
// more, and never lowers a count that is already above the limit (a plan
// that was lowered mid-window); asks of other buckets in the same batch do
// not disturb each other.
func TestTakeMany(t *testing.T) {
	for _, b := range batchers() {
		t.Run(b.name, func(t *testing.T) {
			l := b.new(t)
			ctx := context.Background()
			w := ratelimit.HourWindow(time.Now())
			steps := []struct {
				limit, n, got, count int64
			}{
				{10, 4, 4, 4},  // a new window
				{10, 4, 4, 8},  // more than half full
				{10, 4, 2, 10}, // only 2 left
				{10, 4, 0, 10}, // full
				{20, 3, 3, 13}, // the limit was raised
				{5, 3, 0, 13},  // and lowered under the count: nothing admitted, nothing lost
			}
			for i, s := range steps {
				// Each step also counts 1 request of a fresh bucket and of
				// one that fills up after two steps.
				g, err := l.TakeMany(ctx, []ratelimit.Ask{
					{Bucket: "answer:key:batch", Window: w, Limit: s.limit, N: s.n},
					{Bucket: fmt.Sprintf("answer:key:fresh-%d", i), Window: w, Limit: 100, N: 1},
					{Bucket: "answer:key:small", Window: w, Limit: 2, N: 1},
					{Bucket: "answer:key:nothing", Window: w, Limit: 0, N: 5},
				})
				if err != nil {
					t.Fatal(err)
				}
				if g[0].Admitted != s.got || g[0].Count != s.count {
					t.Fatalf("step %d: ask (limit %d, n %d) = %d admitted, count %d; want %d, %d", i, s.limit, s.n, g[0].Admitted, g[0].Count, s.got, s.count)
				}
				if g[1] != (ratelimit.Granted{Admitted: 1, Count: 1}) {
					t.Fatalf("step %d: a fresh bucket got %+v, want 1 admitted, count 1", i, g[1])
				}
				if want := (ratelimit.Granted{Admitted: int64(max(0, min(1, 2-i))), Count: int64(min(i+1, 2))}); g[2] != want {
					t.Fatalf("step %d: a bucket of limit 2 got %+v, want %+v", i, g[2], want)
				}
				if g[3].Admitted != 0 {
					t.Fatalf("step %d: an ask with limit 0 admitted %d", i, g[3].Admitted)
				}
			}
			if r, err := l.Take(ctx, "answer:key:batch", w, 14); err != nil || !r.Allowed || r.Remaining != 0 {
				t.Fatalf("Take after the batches: %+v, %v; want the 14th admitted with 0 left", r, err)
			}
		})
	}
}

// countingLimiter counts the round trips a Coalescing makes to the real
// limiter underneath.
type countingLimiter struct {
	ratelimit.BatchLimiter
	takes, batches atomic.Int64
}

func (c *countingLimiter) Take(ctx context.Context, bucket string, w ratelimit.Window, limit int64) (ratelimit.Result, error) {
	c.takes.Add(1)
	return c.BatchLimiter.Take(ctx, bucket, w, limit)
}

func (c *countingLimiter) TakeMany(ctx context.Context, asks []ratelimit.Ask) ([]ratelimit.Granted, error) {
	c.batches.Add(1)
	return c.BatchLimiter.TakeMany(ctx, asks)
}

// TestCoalescingSharesRoundTrips: 2,000 concurrent requests of one bucket
// reach PostgreSQL in far fewer round trips, admit exactly the limit, and
// each admitted request sees its own remaining count.
func TestCoalescingSharesRoundTrips(t *testing.T) {
	under := &countingLimiter{BatchLimiter: newPostgres(t, time.Now)}
	l := coalesced(t, under)
	w := ratelimit.HourWindow(time.Now())
	const limit = 1500
	got := takeConcurrently(t, l, "gateway:account:coalesce", w, limit, 2000)
	if len(got) != limit {
		t.Fatalf("2000 concurrent requests under a limit of %d admitted %d", limit, len(got))
	}
	remaining := make([]int, 0, len(got))
	for _, r := range got {
		remaining = append(remaining, int(r.Remaining))
	}
	sort.Ints(remaining)
	for i, r := range remaining {
		if r != i {
			t.Fatalf("admitted requests saw remaining %v..., want each of 0..%d once", remaining[:min(len(remaining), 20)], limit-1)
		}
	}
	trips := under.takes.Load() + under.batches.Load()
	if trips >= 1000 {
		t.Fatalf("2000 concurrent requests made %d round trips; coalescing should share them", trips)
	}
	t.Logf("2000 concurrent requests: %d single takes + %d batches", under.takes.Load(), under.batches.Load())

	// A caller that gives up gets its context's error, not a hang.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Take(ctx, "gateway:account:gone", w, limit); err == nil {
		t.Fatal("Take with an ended context: want its error")
	}
}

// TestCoalescingAcrossBuckets: 64 clients of their own buckets (the
// records service's per-IP public limit) each send 25 requests under a
// limit of 20 at once; every bucket admits exactly 20, in round trips
// shared between buckets.
func TestCoalescingAcrossBuckets(t *testing.T) {
	for _, b := range batchers() {
		t.Run(b.name, func(t *testing.T) {
			under := &countingLimiter{BatchLimiter: b.new(t)}
			l := coalesced(t, under)
			w := ratelimit.HourWindow(time.Now())
			const clients, each, limit = 64, 25, 20
			for c, got := range takeAcrossBuckets(t, []ratelimit.Limiter{l}, "records:ip:127.0.1.", clients, each, w, limit) {
				if got != limit {
					t.Fatalf("bucket %d admitted %d of %d requests, want exactly %d", c, got, each, limit)
				}
			}
			trips := under.takes.Load() + under.batches.Load()
			if trips >= clients*each/4 {
				t.Fatalf("%d requests made %d round trips; coalescing should share them", clients*each, trips)
			}
			t.Logf("%d requests of %d buckets: %d single takes + %d batches", clients*each, clients, under.takes.Load(), under.batches.Load())
		})
	}
}

// TestCoalescingProcessesShareCounters: two coalescing limiters (two
// processes) on one database count the same 64 buckets at once; their
// batches lock counters in one order, so none deadlocks, and every bucket
// admits exactly its limit between them.
func TestCoalescingProcessesShareCounters(t *testing.T) {
	first, pool := newPostgresPool(t, time.Now)
	second, err := ratelimit.NewPostgres(pool, ratelimit.PostgresConfig{})
	if err != nil {
		t.Fatal(err)
	}
	procs := []ratelimit.Limiter{coalesced(t, first), coalesced(t, second)}
	w := ratelimit.HourWindow(time.Now())
	const buckets, each, limit = 64, 30, 40
	for c, got := range takeAcrossBuckets(t, procs, "records:ip:10.0.0.", buckets, each, w, limit) {
		if got != limit {
			t.Fatalf("bucket %d admitted %d of %d requests from two processes, want exactly %d", c, got, 2*each, limit)
		}
	}
}
