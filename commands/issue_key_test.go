package commands_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

func newCommands(t *testing.T) commands.Commands {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c, err := commands.New(commands.Config{Store: st, Clock: func() time.Time { return time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRecordsKeyLimitUnderConcurrency: of many concurrent mints for one
// account, exactly five records keys land.
func TestRecordsKeyLimitUnderConcurrency(t *testing.T) {
	c := newCommands(t)
	ctx := context.Background()
	acc, err := c.CreateAccount.Handle(ctx, commands.CreateAccount{Email: "race@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 32
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, limited := 0, 0
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.IssueKey.Handle(ctx, commands.IssueKey{AccountID: acc.AccountID, Service: account.Records})
			var de *domain.Error
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.As(err, &de) && de.Code == "key_limit_reached":
				limited++
			default:
				t.Errorf("mint: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != 5 || limited != n-5 {
		t.Fatalf("%d mints landed, %d hit the limit; want 5 and %d", ok, limited, n-5)
	}
}

func TestCreateAccountTwiceIsConflict(t *testing.T) {
	c := newCommands(t)
	ctx := context.Background()
	if _, err := c.CreateAccount.Handle(ctx, commands.CreateAccount{Email: "Dup@Example.com"}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateAccount.Handle(ctx, commands.CreateAccount{Email: "dup@example.com "})
	if !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("second account for the same address: %v, want ErrConflict", err)
	}
	_, err = c.CreateAccount.Handle(ctx, commands.CreateAccount{Email: "x@example.com", Plan: "gold"})
	if !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("plan gold: %v, want ErrInvalid", err)
	}
}

func TestRevokeAndPositions(t *testing.T) {
	c := newCommands(t)
	ctx := context.Background()
	acc, _ := c.CreateAccount.Handle(ctx, commands.CreateAccount{Email: "p@example.com"})
	k, err := c.IssueKey.Handle(ctx, commands.IssueKey{AccountID: acc.AccountID, Service: account.Gateway, Name: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	if k.Position <= acc.Position || k.Secret == "" || k.Prefix != "arr_gw_" {
		t.Fatalf("issued key = %+v", k)
	}
	pos, err := c.RevokeKey.Handle(ctx, commands.RevokeKey{AccountID: acc.AccountID, KeyID: k.KeyID})
	if err != nil || pos <= k.Position {
		t.Fatalf("revoke = %d, %v", pos, err)
	}
	pos, err = c.RevokeKey.Handle(ctx, commands.RevokeKey{AccountID: acc.AccountID, KeyID: k.KeyID})
	if err != nil || pos != 0 {
		t.Fatalf("second revoke = %d, %v; want 0 (nothing appended), nil", pos, err)
	}
}
