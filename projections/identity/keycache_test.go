package identity_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/projections/projectiontest"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
)

// TestCachedPrincipalsFollowTheReadModel: two "processes" (two Queries
// on one database) answer a key from memory once it authenticated, and stop
// the moment a revocation or plan change commits in either: the one that
// waited for the write forgets synchronously, the other on the
// notification. A key authenticates at once after its mint (misses are not
// cached), and without a listener nothing is cached at all.
func TestCachedPrincipalsFollowTheReadModel(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	_, st, r := projectiontest.Setup(t, pool, identity.Projection{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cmds, err := commands.New(commands.Config{Store: st, Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	acc, err := cmds.CreateAccount.Handle(ctx, commands.CreateAccount{Email: "cache@example.com", Plan: "free"})
	if err != nil {
		t.Fatal(err)
	}
	mint := func() commands.IssuedKey {
		k, err := cmds.IssueKey.Handle(ctx, commands.IssueKey{AccountID: acc.AccountID, Service: account.Gateway})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.WaitFor(ctx, identity.Name, k.Position); err != nil {
			t.Fatal(err)
		}
		return k
	}
	here, there := identity.NewQueries(pool), identity.NewQueries(pool)
	for _, q := range []*identity.Queries{here, there} {
		go q.ListenForChanges(ctx, t.Logf)
	}
	k1, k2 := mint(), mint()
	// The listeners start asynchronously; wait until a revoked row is no
	// longer served from a cache, i.e. until caching is observably on: the
	// principal survives a change the cache does not know about.
	authOK := func(q *identity.Queries, secret string) (identity.Principal, bool) {
		t.Helper()
		p, err := q.Authenticate(ctx, secret, account.Gateway)
		if errors.Is(err, domain.ErrUnauthenticated) {
			return p, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return p, true
	}
	waitCaching := func(q *identity.Queries, secret string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for i := 0; ; i++ {
			if _, ok := authOK(q, secret); !ok {
				t.Fatal("a valid key did not authenticate")
			}
			// Change the row behind the cache's back (no notification),
			// to a name no earlier lookup can have read.
			name := fmt.Sprintf("behind-the-back-%d", i)
			if _, err := pool.Exec(ctx, `UPDATE rm_identity.api_keys SET name = $2 WHERE secret_hash = $1`, account.HashSecret(secret), name); err != nil {
				t.Fatal(err)
			}
			p, _ := authOK(q, secret)
			if _, err := pool.Exec(ctx, `UPDATE rm_identity.api_keys SET name = '' WHERE secret_hash = $1`, account.HashSecret(secret)); err != nil {
				t.Fatal(err)
			}
			if p.Name != name {
				return // answered from memory
			}
			if time.Now().After(deadline) {
				t.Fatal("the principal was never cached while listening")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitCaching(here, k1.Secret)
	waitCaching(there, k1.Secret)
	waitCaching(there, k2.Secret)

	// A key minted now authenticates at once in both.
	k3 := mint()
	for _, q := range []*identity.Queries{here, there} {
		if _, ok := authOK(q, k3.Secret); !ok {
			t.Fatal("a freshly minted key did not authenticate at once")
		}
	}

	// Revoke k1 and wait for it here: here forgets synchronously.
	pos, err := cmds.RevokeKey.Handle(ctx, commands.RevokeKey{AccountID: acc.AccountID, KeyID: k1.KeyID})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WaitFor(ctx, identity.Name, pos); err != nil {
		t.Fatal(err)
	}
	here.Forget()
	if _, ok := authOK(here, k1.Secret); ok {
		t.Fatal("a revoked key authenticated right after the revocation was waited for")
	}
	// There learns it from the notification.
	eventually(t, "the other process to refuse the revoked key", func() bool { _, ok := authOK(there, k1.Secret); return !ok })

	// A plan change reaches a cached principal of another key (k2) the same way.
	if p, _ := authOK(there, k2.Secret); p.Plan != account.Free {
		t.Fatalf("plan %q, want free", p.Plan)
	}
	pos, err = cmds.ChangePlan.Handle(ctx, commands.ChangePlan{AccountID: acc.AccountID, Change: account.PlanChange{To: account.Pro, Source: "operator", Reference: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WaitFor(ctx, identity.Name, pos); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the other process to see the new plan", func() bool { p, _ := authOK(there, k2.Secret); return p.Plan == account.Pro })

	// Without a listener nothing is cached: a change behind the back shows.
	cold := identity.NewQueries(pool)
	authOK(cold, k2.Secret)
	if _, err := pool.Exec(ctx, `UPDATE rm_identity.api_keys SET name = 'seen' WHERE secret_hash = $1`, account.HashSecret(k2.Secret)); err != nil {
		t.Fatal(err)
	}
	if p, _ := authOK(cold, k2.Secret); p.Name != "seen" {
		t.Fatal("an Queries that does not listen answered from memory")
	}
	// Nor once the listener stops.
	cancel()
	ctx = context.Background()
	eventually(t, "the stopped listener to stop caching", func() bool {
		_, _ = pool.Exec(ctx, `UPDATE rm_identity.api_keys SET name = $2 WHERE secret_hash = $1`, account.HashSecret(k2.Secret), time.Now().String())
		want := ""
		_ = pool.QueryRow(ctx, `SELECT name FROM rm_identity.api_keys WHERE secret_hash = $1`, account.HashSecret(k2.Secret)).Scan(&want)
		p, err := there.Authenticate(ctx, k2.Secret, account.Gateway)
		return err == nil && p.Name == want
	})
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
