package ratelimit_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

func TestServed(t *testing.T) {
	tests := []struct {
		name   string
		status int
		served bool
	}{
		{"ok", http.StatusOK, true},
		{"created", http.StatusCreated, true},
		{"not modified", http.StatusNotModified, true},
		{"bad parameters", http.StatusBadRequest, false},
		{"forbidden plan", http.StatusForbidden, false},
		{"unknown list", http.StatusNotFound, false},
		{"conflict", http.StatusConflict, false},
		{"body too large", http.StatusRequestEntityTooLarge, false},
		{"too many requests took nothing and stays", http.StatusTooManyRequests, true},
		{"server error stays counted", http.StatusInternalServerError, true},
		{"upstream failure stays counted", http.StatusBadGateway, true},
		{"unavailable stays counted", http.StatusServiceUnavailable, true},
		{"a client that hung up stays counted", 499, true},
		{"a slow body is given back", http.StatusRequestTimeout, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ratelimit.Served(tc.status); got != tc.served {
				t.Fatalf("Served(%d) = %v, want %v", tc.status, got, tc.served)
			}
		})
	}
}

// TestGive: a request given back frees one unit of its window; the count
// never goes below zero.
func TestGive(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			c := &clock{t: time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)}
			l := b.new(t, c.now)
			ctx := context.Background()
			w := ratelimit.HourWindow(c.now())
			take := func() ratelimit.Result {
				t.Helper()
				r, err := l.Take(ctx, "give", w, 2)
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			give := func(bucket string) {
				t.Helper()
				if err := l.Give(ctx, bucket, w); err != nil {
					t.Fatal(err)
				}
			}
			take()
			take()
			if r := take(); r.Allowed {
				t.Fatalf("3rd request under a limit of 2 admitted")
			}
			give("give")
			if r := take(); !r.Allowed || r.Remaining != 0 {
				t.Fatalf("after giving one back: %+v, want admitted with 0 left", r)
			}
			// Giving back more than was taken, or in a window never
			// counted, leaves the count at zero.
			give("give")
			give("give")
			give("give")
			give("never-counted")
			if r := take(); !r.Allowed || r.Remaining != 1 {
				t.Fatalf("after giving back everything and more: %+v, want 1 left of 2", r)
			}
			r, err := l.Take(ctx, "never-counted", w, 2)
			if err != nil || !r.Allowed || r.Remaining != 1 {
				t.Fatalf("a window given back before any take: %+v %v, want 1 left of 2", r, err)
			}
		})
	}
}

// TestRefusedRequestsAreGivenBack: requests the handler refuses with a 4xx
// (other than 429) leave the quota as they found it, and say so in
// X-RateLimit-Remaining; served requests and 5xx count; with concurrent
// good and bad requests the window still serves exactly its limit.
func TestRefusedRequestsAreGivenBack(t *testing.T) {
	gin.SetMode(gin.TestMode)
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			c := &clock{t: time.Date(2026, 11, 22, 10, 15, 0, 0, time.UTC)}
			l := b.new(t, c.now)
			q, err := ratelimit.New(l, ratelimit.Config{Now: c.now, PublicPerHour: 20})
			if err != nil {
				t.Fatal(err)
			}
			p := identity.Principal{AccountID: uuid.New(), KeyID: uuid.New(), Plan: account.Free, Service: account.Answer}
			e := gin.New()
			keyed := e.Group("/k", q.Answer(principals(map[string]identity.Principal{"k": p}), fail))
			public := e.Group("/p", q.PublicPerIP(account.Records, fail))
			for _, g := range []*gin.RouterGroup{keyed, public} {
				g.GET("/ok", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"ok": true}) })
				g.GET("/bad", func(c *gin.Context) { fail(c, domain.Invalid("invalid_limit", "limit", "limit must be an integer")) })
				g.GET("/forbidden", func(c *gin.Context) { fail(c, domain.Forbidden("pro_plan_required", "deep needs Pro")) })
				g.GET("/missing", func(c *gin.Context) { fail(c, domain.NotFound("list_not_found", "no list")) })
				g.GET("/no-body", func(c *gin.Context) { c.AbortWithStatus(http.StatusBadRequest) })
				g.GET("/boom", func(c *gin.Context) { fail(c, errors.New("a bug")) })
			}
			for _, tc := range []struct {
				name, prefix, key string
				limit             int64
			}{
				{"keyed", "/k", "k", 100},
				{"public per IP", "/p", "", 20},
			} {
				remaining := tc.limit
				expect := func(path string, status int) {
					t.Helper()
					r := do(t, e, tc.prefix+path, tc.key, "203.0.113.9:5555")
					if r.status != status || headerInt(t, r, "X-RateLimit-Remaining") != remaining || headerInt(t, r, "X-RateLimit-Limit") != tc.limit {
						t.Fatalf("%s %s: %d with X-RateLimit-Remaining %s, want %d with %d", tc.name, path, r.status, r.header.Get("X-RateLimit-Remaining"), status, remaining)
					}
				}
				remaining--
				expect("/ok", http.StatusOK)
				for i := 0; i < 5; i++ {
					expect("/bad", http.StatusBadRequest)
					expect("/forbidden", http.StatusForbidden)
					expect("/missing", http.StatusNotFound)
					expect("/no-body", http.StatusBadRequest)
				}
				remaining--
				expect("/ok", http.StatusOK)
				remaining--
				expect("/boom", http.StatusInternalServerError)
				remaining--
				expect("/ok", http.StatusOK)
			}

			// Concurrency: 5 left, 40 bad and 40 good requests at once.
			// A bad request holds a unit while it runs, so fewer than 5
			// good ones may get through in the burst, but never more, and
			// afterwards the window admits exactly the rest.
			w := ratelimit.DayWindow(c.now())
			bucket := ratelimit.KeyBucket(account.Answer, p.KeyID)
			if got := takeConcurrently(t, l, bucket, w, 100, 100-5-4); len(got) != 91 {
				t.Fatalf("filling: %d admitted", len(got))
			}
			var mu sync.Mutex
			var wg sync.WaitGroup
			served := 0
			start := make(chan struct{})
			for i := 0; i < 80; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					<-start
					path := "/k/ok"
					if i%2 == 1 {
						path = "/k/bad"
					}
					r := do(t, e, path, "k", "")
					if r.status == http.StatusOK {
						mu.Lock()
						served++
						mu.Unlock()
					}
				}(i)
			}
			close(start)
			wg.Wait()
			if served > 5 {
				t.Fatalf("%d good requests served with 5 left", served)
			}
			for i := served; i < 5; i++ {
				if r := do(t, e, "/k/ok", "k", ""); r.status != http.StatusOK {
					t.Fatalf("after the burst (%d served in it), request %d: %d, want the window's last %d served", served, i+1, r.status, 5-served)
				}
			}
			if r := do(t, e, "/k/ok", "k", ""); r.status != http.StatusTooManyRequests {
				t.Fatalf("past the limit: %d", r.status)
			}
		})
	}
}
