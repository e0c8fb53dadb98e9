package ratelimit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/projections/projectiontest"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// TestGatewayKeyAndQuotaInOneRoundTrip: on a counted gateway route, the
// key's look-up counts the request against its plan's daily window in its
// own round trip (PrepareGateway's rider): one round trip per request for
// the key and its quota, the same X-RateLimit-* headers and 429 as a
// separate count, a refused response given back, and a revoked key (401)
// counting nothing.
func TestGatewayKeyAndQuotaInOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	pool, u := migratetest.NewPool(t)
	_, st, runner := projectiontest.Setup(t, pool, identity.Projection{})
	cmds, err := commands.New(commands.Config{Store: st, Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	acc, err := cmds.CreateAccount.Handle(ctx, commands.CreateAccount{Email: "rider@example.com", Plan: "free"})
	if err != nil {
		t.Fatal(err)
	}
	k, err := cmds.IssueKey.Handle(ctx, commands.IssueKey{AccountID: acc.AccountID, Service: account.Gateway})
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.WaitFor(ctx, identity.Name, k.Position); err != nil {
		t.Fatal(err)
	}

	var rt migratetest.RoundTrips
	traced := migratetest.TracedPool(t, u, &rt)
	pg, err := ratelimit.NewPostgres(traced, ratelimit.PostgresConfig{})
	if err != nil {
		t.Fatal(err)
	}
	co, err := ratelimit.Coalesce(pg, ratelimit.CoalesceConfig{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := ratelimit.New(co, ratelimit.Config{Postgres: pg})
	if err != nil {
		t.Fatal(err)
	}
	fail := func(c *gin.Context, err error) {
		p := httpx.ProblemFor(c, err)
		c.AbortWithStatusJSON(p.Status, gin.H{"code": p.Code})
	}
	gin.SetMode(gin.TestMode)
	e := gin.New()
	e.POST("/c", q.PrepareGateway(), httpx.KeyAuth(identity.NewQueries(traced), account.Gateway, false, fail), q.Gateway(httpx.PrincipalOf, fail),
		func(c *gin.Context) {
			if c.Query("bad") != "" {
				c.JSON(http.StatusBadRequest, gin.H{"code": "bad"})
				return
			}
			c.JSON(http.StatusOK, gin.H{"ok": true})
		})
	call := func(secret, query string) (*httptest.ResponseRecorder, int64) {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "/c"+query, nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		w := httptest.NewRecorder()
		before := rt.N()
		e.ServeHTTP(w, req)
		return w, rt.N() - before
	}
	for i, want := range []string{"99", "98", "97"} {
		w, n := call(k.Secret, "")
		if w.Code != http.StatusOK || w.Header().Get("X-RateLimit-Remaining") != want || w.Header().Get("X-RateLimit-Limit") != "100" {
			t.Fatalf("request %d: %d, remaining %q limit %q; want 200, %s of 100", i, w.Code, w.Header().Get("X-RateLimit-Remaining"), w.Header().Get("X-RateLimit-Limit"), want)
		}
		if n != 1 {
			t.Fatalf("request %d took %d round trips for the key and its quota, want 1", i, n)
		}
	}
	// A refused response is given back (one more round trip, after it).
	if w, _ := call(k.Secret, "?bad=1"); w.Code != http.StatusBadRequest || w.Header().Get("X-RateLimit-Remaining") != "97" {
		t.Fatalf("a 400: %d, remaining %q; want 400 and the request given back (97)", w.Code, w.Header().Get("X-RateLimit-Remaining"))
	}
	counter := func() int64 {
		t.Helper()
		var n int64
		if err := pool.QueryRow(ctx, `SELECT count FROM quota_counters WHERE bucket = $1`, ratelimit.AccountBucket(account.Gateway, acc.AccountID)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := counter(); got != 3 {
		t.Fatalf("the counter is %d after 3 served requests and a refused one, want 3", got)
	}
	// A full window: the plan's 429, in the same one round trip.
	if _, err := pool.Exec(ctx, `UPDATE quota_counters SET count = 100 WHERE bucket = $1`, ratelimit.AccountBucket(account.Gateway, acc.AccountID)); err != nil {
		t.Fatal(err)
	}
	w, n := call(k.Secret, "")
	var body struct{ Code string }
	_ = json.Unmarshal(w.Body.Bytes(), &body)
	if w.Code != http.StatusTooManyRequests || body.Code != "daily_request_limit_reached" || w.Header().Get("Retry-After") == "" || w.Header().Get("X-RateLimit-Remaining") != "0" || n != 1 {
		t.Fatalf("a full window: %d %q, Retry-After %q, remaining %q, %d round trips; want 429 daily_request_limit_reached with Retry-After, 0 left, 1 round trip",
			w.Code, body.Code, w.Header().Get("Retry-After"), w.Header().Get("X-RateLimit-Remaining"), n)
	}
	if got := counter(); got != 100 {
		t.Fatalf("a refused request moved the counter to %d", got)
	}
	// A revoked key is refused and counts nothing.
	if _, err := pool.Exec(ctx, `UPDATE quota_counters SET count = 5 WHERE bucket = $1`, ratelimit.AccountBucket(account.Gateway, acc.AccountID)); err != nil {
		t.Fatal(err)
	}
	rv, err := cmds.RevokeKey.Handle(ctx, commands.RevokeKey{AccountID: acc.AccountID, KeyID: k.KeyID})
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.WaitFor(ctx, identity.Name, rv); err != nil {
		t.Fatal(err)
	}
	if w, _ := call(k.Secret, ""); w.Code != http.StatusUnauthorized {
		t.Fatalf("a revoked key: %d, want 401", w.Code)
	}
	if got := counter(); got != 5 {
		t.Fatalf("a revoked key's request moved the counter from 5 to %d", got)
	}
}
