package commands_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// clock is a test clock that can be moved forward.
type clock struct{ now atomic.Int64 }

func (c *clock) Now() time.Time      { return time.Unix(0, c.now.Load()).UTC() }
func (c *clock) Add(d time.Duration) { c.now.Add(int64(d)) }

func newCommandsWithClock(t *testing.T) (commands.Commands, *clock) {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c := &clock{}
	c.now.Store(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC).UnixNano())
	cmds, err := commands.New(commands.Config{Store: st, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return cmds, c
}

func TestMagicLinkWorksOnceEvenConcurrently(t *testing.T) {
	c, _ := newCommandsWithClock(t)
	ctx := context.Background()
	link, err := c.RequestSignIn.Handle(ctx, commands.RequestSignIn{Email: "New@Example.com", Service: account.Gateway})
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	var wg sync.WaitGroup
	var ok, refused atomic.Int32
	results := make(chan commands.SignedIn, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.CompleteSignIn.Handle(ctx, commands.CompleteSignIn{LinkID: link.LinkID.String(), Token: link.Token})
			switch {
			case err == nil:
				ok.Add(1)
				results <- r
			case errors.Is(err, domain.ErrUnauthenticated):
				refused.Add(1)
			default:
				t.Errorf("complete: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || refused.Load() != n-1 {
		t.Fatalf("%d uses succeeded, %d refused; want 1 and %d", ok.Load(), refused.Load(), n-1)
	}
	r := <-results
	if !r.SignedUp || r.Email != "new@example.com" || r.SessionToken == "" || r.FirstKey == nil || r.FirstKey.Service != account.Gateway || r.FirstKey.Secret == "" {
		t.Fatalf("gateway sign-up = %+v; want a new account, a session and a first gateway key", r)
	}
	// Signing in again from the gateway: no second sign-up, no new key.
	link2, _ := c.RequestSignIn.Handle(ctx, commands.RequestSignIn{Email: "new@example.com", Service: account.Gateway})
	r2, err := c.CompleteSignIn.Handle(ctx, commands.CompleteSignIn{LinkID: link2.LinkID.String(), Token: link2.Token})
	if err != nil || r2.SignedUp || r2.FirstKey != nil || r2.AccountID != r.AccountID {
		t.Fatalf("second sign-in = %+v, %v", r2, err)
	}
	if pos, err := c.EndSession.Handle(ctx, commands.EndSession{SessionID: r2.SessionID}); err != nil || pos == 0 {
		t.Fatalf("sign-out: %d, %v", pos, err)
	}
	if pos, err := c.EndSession.Handle(ctx, commands.EndSession{SessionID: r2.SessionID}); err != nil || pos != 0 {
		t.Fatalf("second sign-out: %d, %v", pos, err)
	}
}

func TestMagicLinkRefusals(t *testing.T) {
	c, clk := newCommandsWithClock(t)
	ctx := context.Background()
	link, _ := c.RequestSignIn.Handle(ctx, commands.RequestSignIn{Email: "r@example.com", Service: account.Records})
	tests := []struct {
		name, id, token string
		advance         time.Duration
	}{
		{"wrong token", link.LinkID.String(), "not-the-token", 0},
		{"not a link id", "nope", link.Token, 0},
		{"expired after 15 minutes", link.LinkID.String(), link.Token, 15 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk.Add(tc.advance)
			_, err := c.CompleteSignIn.Handle(ctx, commands.CompleteSignIn{LinkID: tc.id, Token: tc.token})
			if !errors.Is(err, domain.ErrUnauthenticated) {
				t.Fatalf("err = %v, want ErrUnauthenticated", err)
			}
		})
	}
	if _, err := c.RequestSignIn.Handle(ctx, commands.RequestSignIn{Email: "not an address", Service: account.Records}); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("bad address: %v", err)
	}
}

func TestChangePlanIsIdempotentPerReference(t *testing.T) {
	c, _ := newCommandsWithClock(t)
	ctx := context.Background()
	acc, _ := c.CreateAccount.Handle(ctx, commands.CreateAccount{Email: "up@example.com"})
	change := account.PlanChange{To: account.Pro, Source: "stripe", Reference: "evt_1", StripeCustomerID: "cus_1"}
	pos, err := c.ChangePlan.Handle(ctx, commands.ChangePlan{AccountID: acc.AccountID, Change: change})
	if err != nil || pos == 0 {
		t.Fatalf("first change: %d, %v", pos, err)
	}
	pos, err = c.ChangePlan.Handle(ctx, commands.ChangePlan{AccountID: acc.AccountID, Change: change})
	if err != nil || pos != 0 {
		t.Fatalf("replayed change: %d, %v; want nothing appended", pos, err)
	}
	down := account.PlanChange{To: account.Free, Source: "stripe", Reference: "evt_2"}
	if pos, err := c.ChangePlan.Handle(ctx, commands.ChangePlan{AccountID: acc.AccountID, Change: down}); err != nil || pos == 0 {
		t.Fatalf("downgrade: %d, %v", pos, err)
	}
}
