package spend_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/commands/spend"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// TestAdmitCountsThePlanQuotaInTheReservation: the plan count of a
// limited key's request, left by the middleware (ratelimit.Deferred), is
// counted in the key's reservation round trip — one round trip for the
// key, its limits and its quota. When the plan's window is full, Admit
// answers the quota's own 429 and neither counts nor reserves anything.
func TestAdmitCountsThePlanQuotaInTheReservation(t *testing.T) {
	ctx := context.Background()
	_, u := migratetest.NewPool(t)
	var rt migratetest.RoundTrips
	pool := migratetest.TracedPool(t, u, &rt)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := spend.New(spend.Config{Pool: pool, Store: st, Clock: func() time.Time { return now }, Lease: time.Minute, TierOf: func(string) string { return "nano" }})
	if err != nil {
		t.Fatal(err)
	}
	lim, err := ratelimit.NewPostgres(pool, ratelimit.PostgresConfig{})
	if err != nil {
		t.Fatal(err)
	}
	caller := complete.Caller{AccountID: uuid.New(), KeyID: uuid.New(), Plan: account.Free,
		Limits: account.KeyLimits{MaxBudget: 1_000_000, Period: account.PeriodMonth, RPM: 1000}}
	bucket, w, limit := ratelimit.AccountBucket(account.Gateway, caller.AccountID), ratelimit.DayWindow(now), int64(2)
	refusal := func(res ratelimit.Result, retry int64) error {
		return domain.RateLimited("daily_request_limit_reached", "daily limit reached: %d per day (retry in %d s)", res.Limit, retry)
	}
	admit := func() error {
		t.Helper()
		d := lim.Defer(bucket, w, limit, now, refusal)
		before := rt.N()
		settle, err := g.Admit(spend.WithPlanQuota(ctx, d), caller, []string{"m"}, 0.01, 100)
		if n := rt.N() - before; n != 1 {
			t.Fatalf("Admit took %d round trips, want 1 (the quota counted in the reservation)", n)
		}
		if err == nil {
			settle(ctx, 0.001, 10)
		}
		return err
	}
	counted := func() (quota, reserved, used int64) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT coalesce((SELECT count FROM quota_counters WHERE bucket = $1 AND window_start = $2), 0),
			coalesce((SELECT sum(reserved) FROM spend_counters), 0), coalesce((SELECT sum(used) FROM spend_counters), 0)`, bucket, w.Start).
			Scan(&quota, &reserved, &used); err != nil {
			t.Fatal(err)
		}
		return
	}
	for i := 1; i <= 2; i++ {
		if err := admit(); err != nil {
			t.Fatalf("request %d of a window of %d: %v", i, limit, err)
		}
		if q, _, _ := counted(); q != int64(i) {
			t.Fatalf("after request %d the plan counter is %d", i, q)
		}
	}
	q0, r0, u0 := counted()
	err = admit()
	var de *domain.Error
	if !errors.As(err, &de) || de.Code != "daily_request_limit_reached" || !errors.Is(err, domain.ErrRateLimited) {
		t.Fatalf("a request past the plan's window: %v, want the quota's daily_request_limit_reached", err)
	}
	if q, r, u := counted(); q != q0 || r != r0 || u != u0 {
		t.Fatalf("the refused request changed the counters: quota %d->%d, reserved %d->%d, used %d->%d", q0, q, r0, r, u0, u)
	}
	// The key's own limits still work beside it: requests settled at
	// 0.001 each used what they cost.
	if _, _, u := counted(); u == 0 {
		t.Fatal("the admitted requests' spend was not settled")
	}
}
