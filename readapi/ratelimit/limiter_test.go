package ratelimit_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/readapi/ratelimit"
)

// takeConcurrently sends n concurrent Takes and returns the admitted
// results.
func takeConcurrently(t testing.TB, l ratelimit.Limiter, bucket string, w ratelimit.Window, limit int64, n int) []ratelimit.Result {
	t.Helper()
	var mu sync.Mutex
	var admitted []ratelimit.Result
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r, err := l.Take(context.Background(), bucket, w, limit)
			if err != nil {
				errs <- err
				return
			}
			if r.Allowed {
				mu.Lock()
				admitted = append(admitted, r)
				mu.Unlock()
			} else if r.Remaining != 0 || r.Limit != limit {
				errs <- fmt.Errorf("refused result %+v", r)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return admitted
}

// TestExactUnderConcurrency: with 100 requests left, 1000 concurrent
// requests admit exactly 100, and each admitted one sees a distinct
// remaining count.
func TestExactUnderConcurrency(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			l := b.new(t, time.Now)
			w := ratelimit.HourWindow(time.Now())
			const limit = 1000
			bucket := "records:key:concurrency"
			if got := takeConcurrently(t, l, bucket, w, limit, 900); len(got) != 900 {
				t.Fatalf("filling: %d of 900 admitted under a limit of %d", len(got), limit)
			}
			started := time.Now()
			got := takeConcurrently(t, l, bucket, w, limit, 1000)
			took := time.Since(started)
			if len(got) != 100 {
				t.Fatalf("with 100 left, 1000 concurrent requests admitted %d, want exactly 100", len(got))
			}
			var remaining []int
			for _, r := range got {
				remaining = append(remaining, int(r.Remaining))
			}
			sort.Ints(remaining)
			for i, r := range remaining {
				if r != i {
					t.Fatalf("admitted requests saw remaining %v, want each of 0..99 once", remaining)
				}
			}
			if r, err := l.Take(context.Background(), bucket, w, limit); err != nil || r.Allowed {
				t.Fatalf("after the window is full: %+v, %v; want refused", r, err)
			}
			t.Logf("%s: 1000 concurrent requests with 100 left: 100 admitted, 900 refused in %s", b.name, took.Round(time.Millisecond))
		})
	}
}

func TestWindows(t *testing.T) {
	at := time.Date(2026, 11, 22, 23, 59, 59, 500_000_000, time.UTC)
	tests := []struct {
		name       string
		w          ratelimit.Window
		start, end time.Time
		retryAfter int64
	}{
		{"day", ratelimit.DayWindow(at), time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), 1},
		{"hour", ratelimit.HourWindow(at), time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), 1},
		{"day from another zone", ratelimit.DayWindow(at.In(time.FixedZone("UTC+9", 9*3600))), time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), 1},
		{"hour, early", ratelimit.HourWindow(at.Add(-59 * time.Minute)), time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), 3541},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.w.Start.Equal(tc.start) || !tc.w.End.Equal(tc.end) {
				t.Fatalf("window %v..%v, want %v..%v", tc.w.Start, tc.w.End, tc.start, tc.end)
			}
			now := at
			if tc.name == "hour, early" {
				now = at.Add(-59 * time.Minute)
			}
			if got := tc.w.RetryAfter(now); got != tc.retryAfter {
				t.Fatalf("RetryAfter = %d, want %d", got, tc.retryAfter)
			}
		})
	}
	if got := ratelimit.HourWindow(at).RetryAfter(at.Add(time.Hour)); got != 1 {
		t.Fatalf("RetryAfter after the window = %d, want at least 1", got)
	}
}

// TestRollover: a full window refuses until the clock reaches the next
// one, which starts from zero; windows of other buckets are untouched.
func TestRollover(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			c := &clock{t: time.Date(2026, 11, 22, 10, 59, 58, 0, time.UTC)}
			l := b.new(t, c.now)
			ctx := context.Background()
			take := func(bucket string, window func(time.Time) ratelimit.Window, limit int64) ratelimit.Result {
				t.Helper()
				r, err := l.Take(ctx, bucket, window(c.now()), limit)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			for i, want := range []int64{1, 0} {
				if r := take("k", ratelimit.HourWindow, 2); !r.Allowed || r.Remaining != want {
					t.Fatalf("request %d: %+v, want admitted with %d left", i+1, r, want)
				}
			}
			if r := take("k", ratelimit.HourWindow, 2); r.Allowed {
				t.Fatalf("3rd request under a limit of 2 admitted")
			}
			if r := take("other", ratelimit.HourWindow, 2); !r.Allowed || r.Remaining != 1 {
				t.Fatalf("another bucket: %+v, want its own count", r)
			}
			c.t = c.t.Add(1500 * time.Millisecond) // 10:59:59.5, same hour
			if r := take("k", ratelimit.HourWindow, 2); r.Allowed {
				t.Fatalf("still in the full hour, admitted")
			}
			c.t = time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
			r := take("k", ratelimit.HourWindow, 2)
			if !r.Allowed || r.Remaining != 1 || r.Window.End.Unix() != time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC).Unix() {
				t.Fatalf("first request of the next hour: %+v, want admitted with 1 left, resetting at 12:00", r)
			}
			// A day window is independent of the hour windows.
			if r := take("k-day", ratelimit.DayWindow, 1); !r.Allowed {
				t.Fatalf("day window: %+v", r)
			}
			c.t = time.Date(2026, 11, 22, 23, 59, 59, 0, time.UTC)
			if r := take("k-day", ratelimit.DayWindow, 1); r.Allowed {
				t.Fatalf("same UTC day, admitted past the limit")
			}
			c.t = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
			if r := take("k-day", ratelimit.DayWindow, 1); !r.Allowed {
				t.Fatalf("next UTC day refused")
			}
			if r := take("zero", ratelimit.DayWindow, 0); r.Allowed {
				t.Fatalf("a limit of 0 admitted a request")
			}
		})
	}
}

func TestPostgresCleanup(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)}
	l := newPostgres(t, c.now)
	ctx := context.Background()
	for h := 0; h < 5; h++ {
		at := c.t.Add(-time.Duration(h) * time.Hour)
		for _, bucket := range []string{"a", "b", "c"} {
			if _, err := l.Take(ctx, bucket, ratelimit.HourWindow(at), 10); err != nil {
				t.Fatal(err)
			}
		}
	}
	// At 10:30 the windows that ended before 09:30 go: 06-07, 07-08 and
	// 08-09; 09-10 (ended 10:00) and 10-11 stay.
	n, err := l.Cleanup(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 9 {
		t.Fatalf("cleanup deleted %d counters, want the 9 of the three windows that ended over an hour ago", n)
	}
	if n, _ := l.Cleanup(ctx); n != 0 {
		t.Fatalf("second cleanup deleted %d", n)
	}
	// The current window still counts from where it was.
	r, err := l.Take(ctx, "a", ratelimit.HourWindow(c.t), 10)
	if err != nil || r.Remaining != 8 {
		t.Fatalf("current window after cleanup: %+v, %v; want 8 left", r, err)
	}
}

func TestIPBucket(t *testing.T) {
	tests := []struct{ name, ip, want string }{
		{"ipv4", "203.0.113.7", "records:ip:203.0.113.7"},
		{"ipv4-mapped", "::ffff:203.0.113.7", "records:ip:203.0.113.7"},
		{"ipv6 by /64", "2001:db8:1:2:aaaa:bbbb:cccc:dddd", "records:ip:2001:db8:1:2::/64"},
		{"same /64", "2001:db8:1:2::1", "records:ip:2001:db8:1:2::/64"},
		{"unparsable", "", "records:ip:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ratelimit.IPBucket("records", tc.ip); got != tc.want {
				t.Fatalf("IPBucket(%q) = %q, want %q", tc.ip, got, tc.want)
			}
		})
	}
}
