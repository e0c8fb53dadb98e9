package spend_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/account"
)

// TestRunRenewsLiveLeasesAndCutsLostOnes: with a one-minute lease, once
// the clock is 20 s on, Run renews the lease of a request in flight (so
// a sweep at the old expiry releases nothing) and cuts, with
// complete.ErrReservationLost, a request whose reservation another
// process's sweep already released; a settled request is left alone.
func TestRunRenewsLiveLeasesAndCutsLostOnes(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	move := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	g, l, pool := newGuardPool(t, clock)
	caller := complete.Caller{AccountID: uuid.New(), KeyID: uuid.New(),
		Limits: account.KeyLimits{MaxBudget: 100_000, Period: account.PeriodTotal}}
	admit := func() (func(context.Context, float64, int64), chan error) {
		t.Helper()
		cut := make(chan error, 1)
		ctx := complete.WithCut(context.Background(), func(err error) { cut <- err })
		settle, err := g.Admit(ctx, caller, nil, 0.01, 0)
		if err != nil {
			t.Fatal(err)
		}
		return settle, cut
	}
	_, aCut := admit()
	_, bCut := admit()
	settled, settledCut := admit()
	settled(context.Background(), 0.001, 0)
	// Another process released one of the two in flight (its lease was
	// thought over).
	if _, err := pool.Exec(context.Background(), `DELETE FROM spend_reservations WHERE id = (SELECT id FROM spend_reservations ORDER BY id LIMIT 1)`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { _ = g.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	move(20 * time.Second)
	var cuts int
	deadline := time.After(10 * time.Second)
	for cuts == 0 {
		select {
		case err := <-aCut:
			if !errors.Is(err, complete.ErrReservationLost) {
				t.Fatalf("cut with %v", err)
			}
			cuts++
		case err := <-bCut:
			if !errors.Is(err, complete.ErrReservationLost) {
				t.Fatalf("cut with %v", err)
			}
			cuts++
		case <-settledCut:
			t.Fatal("a settled request was cut")
		case <-deadline:
			t.Fatal("the request whose reservation was released was not cut within 10s")
		}
	}
	time.Sleep(1500 * time.Millisecond) // another look of Run: it must not cut the other
	if g.Held() != 1 || len(aCut)+len(bCut) != 0 {
		t.Fatalf("%d requests held, %d more cut; want the live one held and no other cut", g.Held(), len(aCut)+len(bCut))
	}
	// The live one's lease was renewed: a sweep at the old expiry (a
	// minute after admission) releases nothing.
	move(45 * time.Second)
	if n, err := l.Sweep(context.Background(), 10); err != nil || n != 0 {
		t.Fatalf("a sweep after the first lease ran out released %d (%v); want 0, the lease was renewed", n, err)
	}
}
