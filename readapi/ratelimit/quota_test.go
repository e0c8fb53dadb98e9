package ratelimit_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// fail is a service error responder of the shape the services use.
func fail(c *gin.Context, err error) {
	p := httpx.ProblemOf(err)
	c.AbortWithStatusJSON(p.Status, gin.H{"error": gin.H{"status": p.Status, "code": p.Code, "message": p.Message}})
}

// principals stands in for the key middleware: the X-Test-Key header names
// a principal of the table.
func principals(ps map[string]identity.Principal) ratelimit.PrincipalFunc {
	return func(c *gin.Context) (identity.Principal, bool) {
		p, ok := ps[c.GetHeader("X-Test-Key")]
		return p, ok
	}
}

type reply struct {
	status int
	header http.Header
	code   string
	msg    string
}

func do(t testing.TB, h http.Handler, path, key, remote string) reply {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if key != "" {
		req.Header.Set("X-Test-Key", key)
	}
	if remote != "" {
		req.RemoteAddr = remote
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	return reply{rec.Code, rec.Header(), body.Error.Code, body.Error.Message}
}

func headerInt(t testing.TB, r reply, name string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(r.header.Get(name), 10, 64)
	if err != nil {
		t.Fatalf("header %s = %q: %v", name, r.header.Get(name), err)
	}
	return v
}

// TestMiddlewares: each service's limit, its window, its headers, its 429.
func TestMiddlewares(t *testing.T) {
	gin.SetMode(gin.TestMode)
	acct := uuid.New()
	keyA, keyB := uuid.New(), uuid.New()
	tests := []struct {
		name      string
		svc       account.Service
		plan      account.Plan
		limit     int64
		now       time.Time
		reset     time.Time
		code      string
		mention   []string
		sharedAcc bool // both keys of the account share the count
		bucket    func(p identity.Principal) string
		window    func(time.Time) ratelimit.Window
		mw        func(*ratelimit.Quota, ratelimit.PrincipalFunc) gin.HandlerFunc
	}{
		{
			name: "gateway per account per UTC day", svc: account.Gateway, plan: account.Free, limit: 100,
			now: time.Date(2026, 11, 22, 22, 59, 30, 0, time.UTC), reset: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC),
			code: "daily_request_limit_reached", sharedAcc: true,
			mention: []string{"Free plan allows 100 gateway requests per account per UTC day", "2026-11-23T00:00:00Z", "in 3630 s", "upgrade the plan"},
			bucket:  func(p identity.Principal) string { return ratelimit.AccountBucket(account.Gateway, p.AccountID) },
			window:  ratelimit.DayWindow,
			mw: func(q *ratelimit.Quota, pf ratelimit.PrincipalFunc) gin.HandlerFunc {
				return q.Gateway(pf, fail)
			},
		},
		{
			name: "answer per key per UTC day", svc: account.Answer, plan: account.Pro, limit: 5000,
			now: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), reset: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC),
			code:    "daily_call_limit_reached",
			mention: []string{"Pro plan allows 5000 answer calls per key per UTC day", "2026-11-23T00:00:00Z", "in 86400 s", "upgrade the plan"},
			bucket:  func(p identity.Principal) string { return ratelimit.KeyBucket(account.Answer, p.KeyID) },
			window:  ratelimit.DayWindow,
			mw: func(q *ratelimit.Quota, pf ratelimit.PrincipalFunc) gin.HandlerFunc {
				return q.Answer(pf, fail)
			},
		},
		{
			name: "records per key per clock hour", svc: account.Records, plan: account.Free, limit: 1000,
			now: time.Date(2026, 11, 22, 10, 15, 0, 250_000_000, time.UTC), reset: time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC),
			code:    "hourly_request_limit_reached",
			mention: []string{"Free plan allows 1000 records requests per key per clock hour", "2026-11-22T11:00:00Z", "in 2700 s", "upgrade the plan"},
			bucket:  func(p identity.Principal) string { return ratelimit.KeyBucket(account.Records, p.KeyID) },
			window:  ratelimit.HourWindow,
			mw: func(q *ratelimit.Quota, pf ratelimit.PrincipalFunc) gin.HandlerFunc {
				return q.Records(pf, fail)
			},
		},
	}
	for _, b := range backends() {
		for _, tc := range tests {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				c := &clock{t: tc.now}
				l := b.new(t, c.now)
				q, err := ratelimit.New(l, ratelimit.Config{Now: c.now})
				if err != nil {
					t.Fatal(err)
				}
				ps := map[string]identity.Principal{
					"a": {AccountID: acct, KeyID: keyA, Plan: tc.plan, Service: tc.svc},
					"b": {AccountID: acct, KeyID: keyB, Plan: tc.plan, Service: tc.svc},
				}
				e := gin.New()
				e.GET("/x", tc.mw(q, principals(ps)), func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"ok": true}) })
				// Use all but one of key a's window (through the limiter, as
				// earlier requests would have), then: one more admitted, one refused.
				if got := takeConcurrently(t, l, tc.bucket(ps["a"]), tc.window(c.now()), tc.limit, int(tc.limit-1)); int64(len(got)) != tc.limit-1 {
					t.Fatalf("filling: %d admitted", len(got))
				}
				r := do(t, e, "/x", "a", "")
				if r.status != http.StatusOK || headerInt(t, r, "X-RateLimit-Remaining") != 0 || headerInt(t, r, "X-RateLimit-Limit") != tc.limit ||
					headerInt(t, r, "X-RateLimit-Reset") != tc.reset.Unix() || r.header.Get("Retry-After") != "" {
					t.Fatalf("last request of the window: %d %v", r.status, r.header)
				}
				r = do(t, e, "/x", "a", "")
				if r.status != http.StatusTooManyRequests || r.code != tc.code {
					t.Fatalf("over the limit: %d %s %s", r.status, r.code, r.msg)
				}
				want := int64(tc.reset.Sub(tc.now).Seconds())
				if tc.reset.Sub(tc.now)%time.Second != 0 {
					want++
				}
				if got := headerInt(t, r, "Retry-After"); got != want {
					t.Fatalf("Retry-After = %d, want %d (seconds to %s)", got, want, tc.reset)
				}
				if headerInt(t, r, "X-RateLimit-Remaining") != 0 || headerInt(t, r, "X-RateLimit-Reset") != tc.reset.Unix() || headerInt(t, r, "X-RateLimit-Limit") != tc.limit {
					t.Fatalf("429 headers: %v", r.header)
				}
				for _, m := range tc.mention {
					if !strings.Contains(r.msg, m) {
						t.Fatalf("429 message %q does not say %q", r.msg, m)
					}
				}
				// The account's other key: shares the gateway count, has its own elsewhere.
				r = do(t, e, "/x", "b", "")
				if tc.sharedAcc != (r.status == http.StatusTooManyRequests) {
					t.Fatalf("the account's other key: %d (shared count: %v)", r.status, tc.sharedAcc)
				}
				// The next window starts from zero.
				c.t = tc.reset
				if r := do(t, e, "/x", "a", ""); r.status != http.StatusOK || headerInt(t, r, "X-RateLimit-Remaining") != tc.limit-1 {
					t.Fatalf("first request of the next window: %d %v", r.status, r.header)
				}
			})
		}
	}
}

// TestPublicPerIP: the per-IP limit of key-less records routes counts apart
// from the keys' limit, per client address; a request with a key to the
// same public route is counted against the key, never refused per IP; the
// gateway's per-IP limit has buckets of its own and suggests no key.
func TestPublicPerIP(t *testing.T) {
	gin.SetMode(gin.TestMode)
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			c := &clock{t: time.Date(2026, 11, 22, 10, 59, 0, 0, time.UTC)}
			l := b.new(t, c.now)
			q, err := ratelimit.New(l, ratelimit.Config{Now: c.now, PublicPerHour: 3})
			if err != nil {
				t.Fatal(err)
			}
			key := identity.Principal{AccountID: uuid.New(), KeyID: uuid.New(), Plan: account.Free, Service: account.Records}
			keys := principals(map[string]identity.Principal{"k": key})
			e := gin.New()
			ok := func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{}) }
			e.GET("/public", q.RecordsPublic(keys, fail), ok)
			e.GET("/keyed", q.Records(keys, fail), ok)
			e.GET("/log", q.PublicPerIP(account.Gateway, fail), ok)
			const ip = "203.0.113.9:5555"
			for i := int64(0); i < 3; i++ {
				if r := do(t, e, "/public", "", ip); r.status != http.StatusOK || headerInt(t, r, "X-RateLimit-Remaining") != 2-i || headerInt(t, r, "X-RateLimit-Limit") != 3 {
					t.Fatalf("public request %d: %d %v", i+1, r.status, r.header)
				}
			}
			r := do(t, e, "/public", "", ip)
			if r.status != http.StatusTooManyRequests || r.code != "ip_rate_limit_reached" || r.header.Get("Retry-After") != "60" ||
				!strings.Contains(r.msg, "3 requests per IP address per clock hour") || !strings.Contains(r.msg, "API key") {
				t.Fatalf("4th public request: %d %s %q %v", r.status, r.code, r.msg, r.header)
			}
			// Keyed traffic from the same address, to the keyed and to the
			// public route, is not held back and counts against the key.
			for i := int64(0); i < 6; i++ {
				path := []string{"/keyed", "/public"}[i%2]
				if r := do(t, e, path, "k", ip); r.status != http.StatusOK || headerInt(t, r, "X-RateLimit-Limit") != 1000 || headerInt(t, r, "X-RateLimit-Remaining") != 999-i {
					t.Fatalf("keyed request %d to %s from a limited IP: %d %v", i+1, path, r.status, r.header)
				}
			}
			if r := do(t, e, "/public", "", "198.51.100.1:80"); r.status != http.StatusOK {
				t.Fatalf("another IP: %d", r.status)
			}
			if r := do(t, e, "/public", "", "[2001:db8::1]:80"); r.status != http.StatusOK || headerInt(t, r, "X-RateLimit-Remaining") != 2 {
				t.Fatalf("an IPv6 client: %d %v", r.status, r.header)
			}
			if r := do(t, e, "/public", "", "[2001:db8::2]:80"); headerInt(t, r, "X-RateLimit-Remaining") != 1 {
				t.Fatalf("the same /64 is one client: %v", r.header)
			}
			// The gateway's log routes: the same limit, their own buckets.
			for i := int64(0); i < 3; i++ {
				if r := do(t, e, "/log", "", ip); r.status != http.StatusOK || headerInt(t, r, "X-RateLimit-Remaining") != 2-i {
					t.Fatalf("log request %d from an IP the records limit refuses: %d %v", i+1, r.status, r.header)
				}
			}
			if r := do(t, e, "/log", "k", ip); r.status != http.StatusTooManyRequests || r.code != "ip_rate_limit_reached" || strings.Contains(strings.ToLower(r.msg), "key") {
				t.Fatalf("4th log request: %d %s %q; want 429 that suggests no key (keys are not counted there)", r.status, r.code, r.msg)
			}
		})
	}
}

// TestCounterDown: when the counters cannot be reached the request is
// refused with 503, not served uncounted.
func TestCounterDown(t *testing.T) {
	gin.SetMode(gin.TestMode)
	l, pool := newPostgresPool(t, time.Now)
	q, err := ratelimit.New(l, ratelimit.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ps := map[string]identity.Principal{"k": {AccountID: uuid.New(), KeyID: uuid.New(), Plan: account.Free, Service: account.Gateway}}
	e := gin.New()
	e.GET("/x", q.Gateway(principals(ps), fail), func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{}) })
	if r := do(t, e, "/x", "k", ""); r.status != http.StatusOK {
		t.Fatalf("before: %d", r.status)
	}
	pool.Close()
	r := do(t, e, "/x", "k", "")
	if r.status != http.StatusServiceUnavailable || r.header.Get("X-RateLimit-Remaining") != "" {
		t.Fatalf("counter store down: %d %v, want 503 without rate-limit headers", r.status, r.header)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  ratelimit.Config
		ok   bool
		want int64
	}{
		{"defaults", ratelimit.Config{}, true, ratelimit.DefaultPublicPerHour},
		{"set", ratelimit.Config{PublicPerHour: 42}, true, 42},
		{"negative", ratelimit.Config{PublicPerHour: -1}, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.ok != (err == nil) || (tc.ok && tc.cfg.PublicPerHour != tc.want) {
				t.Fatalf("Validate: %v, PublicPerHour %d", err, tc.cfg.PublicPerHour)
			}
		})
	}
	if _, err := ratelimit.New(nil, ratelimit.Config{}); err == nil {
		t.Fatalf("New(nil limiter) succeeded")
	}
}
