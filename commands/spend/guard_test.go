package spend_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/commands/spend"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

func newGuard(t testing.TB, now time.Time) (*spend.Guard, *spend.Ledger) {
	t.Helper()
	return newGuardAt(t, func() time.Time { return now })
}

func newGuardAt(t testing.TB, clock func() time.Time) (*spend.Guard, *spend.Ledger) {
	t.Helper()
	g, l, _ := newGuardPool(t, clock)
	return g, l
}

func newGuardPool(t testing.TB, clock func() time.Time) (*spend.Guard, *spend.Ledger, *pgxpool.Pool) {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := spend.New(spend.Config{Pool: pool, Store: st, Clock: clock, Lease: time.Minute, TierOf: func(string) string { return "nano" }})
	if err != nil {
		t.Fatal(err)
	}
	l, err := spend.NewLedger(pool, clock)
	if err != nil {
		t.Fatal(err)
	}
	return g, l, pool
}

// TestAdmitIsExactUnderConcurrency: 50 concurrent admissions, each
// reserving $0.03 of a key's $0.10 budget and of its account's $0.07
// budget, admit exactly 2 (the account's budget holds two reservations)
// while none has settled; settling at the real cost frees the rest of
// each reservation.
func TestAdmitIsExactUnderConcurrency(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	g, l := newGuard(t, now)
	caller := complete.Caller{AccountID: uuid.New(), KeyID: uuid.New(),
		Limits:        account.KeyLimits{MaxBudget: 100_000, Period: account.PeriodMonth},
		AccountBudget: account.Budget{Max: 70_000, Period: account.PeriodDay}}
	const n = 50
	var mu sync.Mutex
	var settles []func(context.Context, float64, int64)
	refused := 0
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			settle, err := g.Admit(context.Background(), caller, []string{"gpt-4.1-nano"}, 0.03, 100)
			mu.Lock()
			defer mu.Unlock()
			var de *domain.Error
			switch {
			case err == nil:
				settles = append(settles, settle)
			case errors.As(err, &de) && de.Code == "budget_exceeded" && errors.Is(err, domain.ErrRateLimited):
				refused++
			default:
				t.Errorf("admit: %v", err)
			}
		}()
	}
	wg.Wait()
	if len(settles) != 2 || refused != n-2 {
		t.Fatalf("%d admitted, %d refused; want exactly 2 and %d", len(settles), refused, n-2)
	}
	s, err := l.AccountSpent(context.Background(), caller.AccountID, account.PeriodDay)
	if err != nil || s.Reserved != 60_000 || s.Used != 0 {
		t.Fatalf("the account's budget while both are in flight: %+v %v", s, err)
	}
	for _, settle := range settles {
		settle(context.Background(), 0.01, 42)
		settle(context.Background(), 0.01, 42) // a second call changes nothing
	}
	for _, get := range []func() (spend.Spent, error){
		func() (spend.Spent, error) {
			return l.KeySpent(context.Background(), caller.KeyID, account.PeriodMonth)
		},
		func() (spend.Spent, error) {
			return l.AccountSpent(context.Background(), caller.AccountID, account.PeriodDay)
		},
	} {
		if s, err := get(); err != nil || s.Used != 20_000 || s.Reserved != 0 {
			t.Fatalf("after settling $0.01 each: %+v %v", s, err)
		}
	}
	// $0.05 of the account's $0.07 is left: one more $0.03 fits, not two.
	if _, err := g.Admit(context.Background(), caller, nil, 0.03, 0); err != nil {
		t.Fatalf("after settling: %v", err)
	}
	if _, err := g.Admit(context.Background(), caller, nil, 0.03, 0); err == nil {
		t.Fatal("a reservation past the account's budget was admitted")
	}
}

func TestAdmitRefusesModelsAndExpiredKeys(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	g, _ := newGuard(t, now)
	past := now.Add(-time.Second)
	for _, tc := range []struct {
		name   string
		limits account.KeyLimits
		models []string
		kind   error
		code   string
	}{
		{"a model outside the key's", account.KeyLimits{Models: []string{"small"}}, []string{"gpt-4.1-nano"}, domain.ErrForbidden, "model_not_allowed"},
		{"an expired key", account.KeyLimits{ExpiresAt: &past}, nil, domain.ErrUnauthenticated, "key_expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := g.Admit(context.Background(), complete.Caller{KeyID: uuid.New(), Limits: tc.limits}, tc.models, 0.01, 10)
			var de *domain.Error
			if !errors.As(err, &de) || de.Code != tc.code || !errors.Is(err, tc.kind) {
				t.Fatalf("got %v; want %s", err, tc.code)
			}
		})
	}
	// A key listing the tier may use its models.
	if _, err := g.Admit(context.Background(), complete.Caller{KeyID: uuid.New(), Limits: account.KeyLimits{Models: []string{"nano"}}},
		[]string{"gpt-4.1-nano"}, 0.01, 10); err != nil {
		t.Fatalf("a nano key on a nano model: %v", err)
	}
}

// TestSweepKeepsWhatARunningPeriodReserved: leases run on the
// database's clock (now()), never a process's. A reservation whose lease
// ran out (its process died, froze, or lost its settle to a database
// blip) stays counted against its budget while the budget's period runs:
// the sweep extends its lease to the period's end and releases nothing,
// so its room is never spent twice; a settle that comes late replaces it
// with what was spent; once the period has ended the sweep releases it.
func TestSweepKeepsWhatARunningPeriodReserved(t *testing.T) {
	g, l, pool := newGuardPool(t, time.Now)
	ctx := context.Background()
	caller := complete.Caller{AccountID: uuid.New(), KeyID: uuid.New(), Limits: account.KeyLimits{MaxBudget: 100_000, Period: account.PeriodTotal}}
	late, err := g.Admit(ctx, caller, nil, 0.04, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Admit(ctx, caller, nil, 0.05, 0); err != nil { // never settled
		t.Fatal(err)
	}
	if n, err := l.Sweep(ctx, 10); err != nil || n != 0 {
		t.Fatalf("Sweep of live leases = %d, %v; want 0", n, err)
	}
	// Both leases run out on the database's clock.
	if _, err := pool.Exec(ctx, `UPDATE spend_reservations SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if n, err := l.Sweep(ctx, 10); err != nil || n != 2 {
		t.Fatalf("Sweep = %d, %v; want the two expired reservations", n, err)
	}
	if s, _ := l.KeySpent(ctx, caller.KeyID, account.PeriodTotal); s.Reserved != 90_000 || s.Used != 0 {
		t.Fatalf("after the sweep (the period runs): %+v; want both still reserved", s)
	}
	if n, err := l.Sweep(ctx, 10); err != nil || n != 0 {
		t.Fatalf("a second Sweep = %d, %v; want 0 (their leases run to the period's end)", n, err)
	}
	late(ctx, 0.01, 10)
	if s, _ := l.KeySpent(ctx, caller.KeyID, account.PeriodTotal); s.Reserved != 50_000 || s.Used != 10_000 {
		t.Fatalf("after a late settle: %+v; want its reservation replaced by what it spent", s)
	}
	// The period ends: the sweep releases what is left.
	if _, err := pool.Exec(ctx, `UPDATE spend_counters SET window_end = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE spend_reservations SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if n, err := l.Sweep(ctx, 10); err != nil || n != 1 {
		t.Fatalf("Sweep after the period ended = %d, %v", n, err)
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM spend_reservations`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("reservations left: %d, %v", left, err)
	}
}

// TestConcurrentSettlesCrossEachThresholdOnce: 40 concurrent requests
// that together spend exactly a key's budget settle in coalesced rounds;
// the spend is exact and 50%, 80% and 100% are each recorded once.
func TestConcurrentSettlesCrossEachThresholdOnce(t *testing.T) {
	g, l, pool := newGuardPool(t, time.Now)
	ctx := context.Background()
	caller := complete.Caller{AccountID: uuid.New(), KeyID: uuid.New(), Limits: account.KeyLimits{MaxBudget: 40_000, Period: account.PeriodWeek}}
	settles := make([]func(context.Context, float64, int64), 40)
	var wg sync.WaitGroup
	for i := range settles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := g.Admit(ctx, caller, nil, 0.001, 0)
			if err != nil {
				t.Errorf("admit %d: %v", i, err)
			}
			settles[i] = s
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if _, err := g.Admit(ctx, caller, nil, 0.000001, 0); err == nil {
		t.Fatal("a 41st reservation fit a budget the 40 reserved in full")
	}
	for _, s := range settles {
		wg.Add(1)
		go func() { defer wg.Done(); s(ctx, 0.001, 0) }()
	}
	wg.Wait()
	if s, err := l.KeySpent(ctx, caller.KeyID, account.PeriodWeek); err != nil || s.Used != 40_000 || s.Reserved != 0 {
		t.Fatalf("after 40 settles of $0.001: %+v %v", s, err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(DISTINCT data->>'threshold_percent') FROM events WHERE event_type = 'BudgetThresholdCrossed'
		HAVING count(*) = count(DISTINCT data->>'threshold_percent')`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d BudgetThresholdCrossed events (%v); want 3: 50%%, 80%% and 100%% once each", n, err)
	}
}
