package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// burstReply is one response of a burst.
type burstReply struct {
	status                    int
	limit, remaining, reset   string
	retryAfter, code, errType string
}

// burst sends n GETs to url at once (all connections open before any
// request is sent) and returns the replies.
func burst(t testing.TB, url string, headers map[string]string, n int) ([]burstReply, time.Duration) {
	return burstBody(t, url, nil, headers, n)
}

// gatewayCompletion is the body the gateway's quota tests send: only chat
// completions count against the gateway's daily limit.
var gatewayCompletion = []byte(`{"messages":[{"role":"user","content":"Say hello"}]}`)

// burstBody is burst with a POST of body (a GET when body is nil).
func burstBody(t testing.TB, url string, body []byte, headers map[string]string, n int) ([]burstReply, time.Duration) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0}}
	defer client.CloseIdleConnections()
	out := make([]burstReply, n)
	errs := make(chan error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			if body != nil {
				req, _ = http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			}
			for k, v := range headers {
				req.Header.Set(k, v)
			}
			<-start
			resp, err := client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var e struct {
				Error struct {
					Code string `json:"code"`
					Type string `json:"type"`
				} `json:"error"`
			}
			_ = json.Unmarshal(body, &e)
			out[i] = burstReply{status: resp.StatusCode, limit: resp.Header.Get("X-RateLimit-Limit"), remaining: resp.Header.Get("X-RateLimit-Remaining"),
				reset: resp.Header.Get("X-RateLimit-Reset"), retryAfter: resp.Header.Get("Retry-After"), code: e.Error.Code, errType: e.Error.Type}
		}(i)
	}
	began := time.Now()
	close(start)
	wg.Wait()
	took := time.Since(began)
	close(errs)
	for err := range errs {
		t.Fatalf("GET %s: %v", url, err)
	}
	return out, took
}

// awayFromWindowEnd waits for the next window if the current one ends
// within a minute, so a burst is counted in one window.
func awayFromWindowEnd(t testing.TB, window func(time.Time) ratelimit.Window) ratelimit.Window {
	t.Helper()
	w := window(time.Now())
	if left := time.Until(w.End); left < time.Minute {
		t.Logf("the window ends in %s: waiting for the next one", left.Round(time.Second))
		time.Sleep(left + time.Second)
		w = window(time.Now())
	}
	return w
}

// prefill sets a counter as if `used` requests had been counted in the
// window: the quickest honest way to leave few requests in a window of 1000
// without sending 900 requests first. It writes the table the PostgreSQL
// limiter counts in (migration 00004), under the bucket names the
// middlewares use.
func prefill(t testing.TB, pool *pgxpool.Pool, bucket string, w ratelimit.Window, used int64) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `INSERT INTO quota_counters (bucket, window_start, window_end, count) VALUES ($1, $2, $3, $4)
		ON CONFLICT (bucket, window_start) DO UPDATE SET count = excluded.count`, bucket, w.Start, w.End, used); err != nil {
		t.Fatalf("pre-filling %s: %v", bucket, err)
	}
}

// checkBurst asserts exactly `left` 200s, the rest 429s with Retry-After,
// and the rate-limit headers on every response.
func checkBurst(t testing.TB, replies []burstReply, left int, limit int64, w ratelimit.Window, code, errType string) {
	t.Helper()
	var ok, limited int
	var remaining []int
	for _, r := range replies {
		if r.limit != strconv.FormatInt(limit, 10) || r.reset != strconv.FormatInt(w.End.Unix(), 10) {
			t.Fatalf("response %d: X-RateLimit-Limit %q, X-RateLimit-Reset %q; want %d and %d", r.status, r.limit, r.reset, limit, w.End.Unix())
		}
		n, err := strconv.Atoi(r.remaining)
		if err != nil {
			t.Fatalf("response %d: X-RateLimit-Remaining %q", r.status, r.remaining)
		}
		switch r.status {
		case http.StatusOK:
			ok++
			remaining = append(remaining, n)
			if r.retryAfter != "" {
				t.Fatalf("a 200 with Retry-After %q", r.retryAfter)
			}
		case http.StatusTooManyRequests:
			limited++
			ra, err := strconv.ParseInt(r.retryAfter, 10, 64)
			if err != nil || ra < 1 || ra > int64(w.End.Sub(w.Start).Seconds()) || n != 0 {
				t.Fatalf("a 429 with Retry-After %q, remaining %d", r.retryAfter, n)
			}
			// Retry-After and X-RateLimit-Reset name the same instant.
			if reset := time.Unix(w.End.Unix(), 0); time.Now().Add(time.Duration(ra)*time.Second).Before(reset.Add(-5*time.Second)) || time.Now().Add(time.Duration(ra)*time.Second).After(reset.Add(5*time.Second)) {
				t.Fatalf("Retry-After %d s does not point at the window end %s", ra, reset)
			}
			if r.code != code || r.errType != errType {
				t.Fatalf("429 body: code %q type %q, want %q %q", r.code, r.errType, code, errType)
			}
		default:
			t.Fatalf("unexpected status %d (%s)", r.status, r.code)
		}
	}
	if ok != left || limited != len(replies)-left {
		t.Fatalf("%d concurrent requests with %d left: %d 200s and %d 429s, want exactly %d and %d", len(replies), left, ok, limited, left, len(replies)-left)
	}
	sort.Ints(remaining)
	for i, n := range remaining {
		if n != i {
			t.Fatalf("the admitted requests saw X-RateLimit-Remaining %v, want each of 0..%d once", remaining, left-1)
		}
	}
}

// usageCalls is what the usage read model holds for a key, waiting
// (bounded) until it reaches want.
func usageCalls(t testing.TB, pool *pgxpool.Pool, keyID string, want int64) int64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int64
		err := pool.QueryRow(context.Background(), `SELECT coalesce(sum(calls), 0)::bigint FROM rm_usage.usage_daily WHERE key_id = $1`, keyID).Scan(&n)
		if err == nil && n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestQuotasExactUnderConcurrency: for each service's limit, an account
// with a few requests left fires 1000 concurrent requests at the real
// `arr up` (counters in PostgreSQL) and gets exactly that many 200s, the
// rest 429s with Retry-After; every response carries the rate-limit
// headers; the usage read model counts exactly the admitted requests and
// a rebuild from the log reproduces it.
func TestQuotasExactUnderConcurrency(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "REDIS_URL=", "ARR_UPSTREAM_BASE_URL="+upstreamtest.Start(t).URL)
	e.up()
	pool, _ := openStore(t, e.dbURL)
	const n = 1000
	tests := []struct {
		svc     account.Service
		path    string
		limit   int64
		left    int
		window  func(time.Time) ratelimit.Window
		bucket  func(k mintedKey, accountID uuid.UUID) string
		code    string
		errType string
		name    string
		limits  []string // the key's own limits (arr keys mint flags)
	}{
		// A fresh Free account has its whole day left: 100 (spec).
		{account.Gateway, "/v1/chat/completions", 100, 100, ratelimit.DayWindow,
			func(_ mintedKey, a uuid.UUID) string { return ratelimit.AccountBucket(account.Gateway, a) }, "daily_request_limit_reached", "rate_limit_error", "", nil},
		// A key with limits of its own: its plan count goes with its
		// reservation (one round trip), and stays exact.
		{account.Gateway, "/v1/chat/completions", 100, 100, ratelimit.DayWindow,
			func(_ mintedKey, a uuid.UUID) string { return ratelimit.AccountBucket(account.Gateway, a) }, "daily_request_limit_reached", "rate_limit_error",
			"gateway limited key", []string{"--rpm", "1000000", "--max-budget-usd", "1000000", "--budget-period", "month"}},
		{account.Answer, "/api/v1/key", 100, 100, ratelimit.DayWindow,
			func(k mintedKey, _ uuid.UUID) string {
				return ratelimit.KeyBucket(account.Answer, uuid.MustParse(k.ID))
			}, "daily_call_limit_reached", "", "", nil},
		// 1000 per hour (spec), 900 of them pre-counted: 100 left.
		{account.Records, "/api/v1/key", 1000, 100, ratelimit.HourWindow,
			func(k mintedKey, _ uuid.UUID) string {
				return ratelimit.KeyBucket(account.Records, uuid.MustParse(k.ID))
			}, "hourly_request_limit_reached", "", "", nil},
	}
	usage := map[string]int64{}
	for _, tc := range tests {
		name := tc.name
		if name == "" {
			name = string(tc.svc)
		}
		t.Run(name, func(t *testing.T) {
			email := "quota-" + strings.ReplaceAll(name, " ", "-") + "@example.com"
			e.createAccount(email, "free")
			var k mintedKey
			e.mustArr(&k, append([]string{"keys", "mint", "--email", email, "--service", string(tc.svc), "--json"}, tc.limits...)...)
			w := awayFromWindowEnd(t, tc.window)
			if used := tc.limit - int64(tc.left); used > 0 {
				prefill(t, pool, tc.bucket(k, account.IDForEmail(email)), w, used)
			}
			if tc.limits != nil {
				// Refused before its reservation (a body that does not
				// parse): counted nowhere, with the window's headers.
				bad, _ := burstBody(t, e.base(string(tc.svc))+tc.path, []byte(`{"messages":"hello"}`), map[string]string{"Authorization": "Bearer " + k.Secret}, 1)
				if b := bad[0]; b.status != http.StatusBadRequest || b.limit != strconv.FormatInt(tc.limit, 10) || b.remaining != strconv.Itoa(tc.left) || b.reset != strconv.FormatInt(w.End.Unix(), 10) {
					t.Fatalf("a bad body: %d with X-RateLimit-Limit %q, -Remaining %q, -Reset %q; want 400, %d, %d, %d", b.status, b.limit, b.remaining, b.reset, tc.limit, tc.left, w.End.Unix())
				}
			}
			var body []byte
			if tc.svc == account.Gateway {
				body = gatewayCompletion
			}
			replies, took := burstBody(t, e.base(string(tc.svc))+tc.path, body, map[string]string{"Authorization": "Bearer " + k.Secret}, n)
			checkBurst(t, replies, tc.left, tc.limit, w, tc.code, tc.errType)
			t.Logf("%s: %d concurrent requests with %d left: exactly %d 200s and %d 429s, in %s", tc.svc, n, tc.left, tc.left, n-tc.left, took.Round(time.Millisecond))
			if got := usageCalls(t, pool, k.ID, int64(tc.left)); got != int64(tc.left) {
				t.Fatalf("usage read model counts %d calls for the key, want the %d admitted", got, tc.left)
			}
			usage[k.ID] = int64(tc.left)
		})
	}
	// Usage is rebuilt identically from the log.
	var live, rebuilt string
	q := `SELECT coalesce(json_agg(u ORDER BY account_id, day, service, key_id)::text, '') FROM rm_usage.usage_daily u`
	if err := pool.QueryRow(context.Background(), q).Scan(&live); err != nil {
		t.Fatal(err)
	}
	e.mustArr(nil, "projections", "rebuild", "usage")
	if err := pool.QueryRow(context.Background(), q).Scan(&rebuilt); err != nil {
		t.Fatal(err)
	}
	if live != rebuilt || live == "" {
		t.Fatalf("usage after a rebuild differs from the live read model\nlive:    %s\nrebuilt: %s", live, rebuilt)
	}
	for id, want := range usage {
		if got := usageCalls(t, pool, id, want); got != want {
			t.Fatalf("key %s: %d calls after the rebuild, want %d", id, got, want)
		}
	}
}

// TestPublicRecordsPerIP: the records service's key-less endpoints have a
// per-IP limit of their own (default 600 per hour; /openapi.json is one of
// them): with 50 left, 300 concurrent requests give exactly 50 200s; keyed
// requests from the same address go on and do not touch the IP's count.
func TestPublicRecordsPerIP(t *testing.T) {
	e := newEnv(t)
	// Nothing else runs against the records service while the burst does
	// (the answer service's seeding reads the data sources in-process).
	e.extraEnv = append(e.extraEnv, "REDIS_URL=", "ARR_ANSWER_SEED=off")
	e.up()
	pool, _ := openStore(t, e.dbURL)
	w := awayFromWindowEnd(t, ratelimit.HourWindow)
	ipBucket := ratelimit.IPBucket(account.Records, "127.0.0.1")
	prefill(t, pool, ipBucket, w, ratelimit.DefaultPublicPerHour-50)
	replies, took := burst(t, e.records+"/openapi.json", nil, 300)
	checkBurst(t, replies, 50, ratelimit.DefaultPublicPerHour, w, "ip_rate_limit_reached", "")
	t.Logf("records /openapi.json: 300 concurrent requests with 50 left for the IP: exactly 50 200s, in %s", took.Round(time.Millisecond))

	e.createAccount("keyed-after-ip@example.com", "free")
	k := e.mint("keyed-after-ip@example.com", "records")
	for i := 0; i < 20; i++ {
		h := map[string]string{"X-API-Key": k.Secret}
		if i%2 == 0 {
			h = map[string]string{"Authorization": "Bearer " + k.Secret}
		}
		req, _ := http.NewRequest(http.MethodGet, e.records+"/api/v1/key", nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("X-RateLimit-Limit") != "1000" || resp.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(999-i) {
			t.Fatalf("keyed request %d from an IP over its limit: %d, limit %q remaining %q", i+1, resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"), resp.Header.Get("X-RateLimit-Remaining"))
		}
	}
	var count int64
	if err := pool.QueryRow(context.Background(), `SELECT count FROM quota_counters WHERE bucket = $1 AND window_start = $2`, ipBucket, w.Start).Scan(&count); err != nil || count != ratelimit.DefaultPublicPerHour {
		t.Fatalf("the IP's counter is %d (%v) after keyed requests, want it still at %d", count, err, ratelimit.DefaultPublicPerHour)
	}
	// A request without a valid key is neither counted nor given the headers.
	resp, err := http.Get(e.records + "/api/v1/key")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("X-RateLimit-Limit") != "" {
		t.Fatalf("no key: %d with X-RateLimit-Limit %q, want 401 without it", resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"))
	}
	// /healthz stays open for monitors.
	if code, _ := get(t, e.records+"/healthz", nil); code != 200 {
		t.Fatalf("/healthz with the IP over its limit: %d", code)
	}
}

// TestQuotaInRedis: with REDIS_URL, arr up counts in Redis, just as exactly.
func TestQuotaInRedis(t *testing.T) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "REDIS_URL="+url, "ARR_LOG_LEVEL=info", "ARR_UPSTREAM_BASE_URL="+upstreamtest.Start(t).URL)
	p := e.up()
	if !containsLog(p, "quota counters in Redis") {
		t.Fatalf("arr up did not say it counts in Redis (is redis-server running at %s? scripts/test.sh starts it); logs:\n%s", url, p.logs.String())
	}
	// Redis outlives the test database: a new address is a new account,
	// with a new counter.
	email := "redis-quota-" + uuid.NewString()[:8] + "@example.com"
	e.createAccount(email, "free")
	k := e.mint(email, "gateway")
	w := awayFromWindowEnd(t, ratelimit.DayWindow)
	replies, took := burstBody(t, e.gateway+"/v1/chat/completions", gatewayCompletion, map[string]string{"Authorization": "Bearer " + k.Secret}, 1000)
	checkBurst(t, replies, 100, 100, w, "daily_request_limit_reached", "rate_limit_error")
	t.Logf("gateway with Redis counters: 1000 concurrent requests with 100 left: exactly 100 200s, in %s", took.Round(time.Millisecond))
}

func containsLog(p *proc, s string) bool {
	return strings.Contains(p.logs.String(), s)
}
