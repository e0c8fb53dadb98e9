package identity_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/projections/projectiontest"
)

// freezingIdentity is identity whose batches, once armed, stop in a
// rebuild's shadow schema until release is closed: a rebuild process
// frozen inside its swap transaction.
type freezingIdentity struct {
	armed   *atomic.Bool
	frozen  chan struct{}
	once    *sync.Once
	release chan struct{}
}

func (f freezingIdentity) Spec() projections.Spec {
	s := identity.Projection{}.Spec()
	inner := s.Batch
	s.Batch = func() projections.Batch {
		b := inner()
		flush := b.Flush
		b.Flush = func(ctx context.Context, tx pgx.Tx) error {
			var schema string
			if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
				return err
			}
			if f.armed.Load() && schema == projections.Schema(identity.Name)+"__shadow" {
				f.once.Do(func() { close(f.frozen) })
				<-f.release
			}
			if flush == nil {
				return nil
			}
			return flush(ctx, tx)
		}
		return b
	}
	return s
}

// TestFrozenIdentitySwapDoesNotHoldRevocations: identity guards keys, and
// its readers wait for it (a revocation is read-your-writes). A rebuild
// of identity frozen inside its swap must not hold the live projection:
// a key revoked meanwhile stops working within the takeover bound, a key
// minted meanwhile works; woken, the rebuild fails having swapped nothing
// in, and the next rebuild keeps both.
func TestFrozenIdentitySwapDoesNotHoldRevocations(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	_, st, live := projectiontest.Setup(t, pool, identity.Projection{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- live.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	cmds, err := commands.New(commands.Config{Store: st, Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	acc, err := cmds.CreateAccount.Handle(ctx, commands.CreateAccount{Email: "freeze@example.com", Plan: "free"})
	if err != nil {
		t.Fatal(err)
	}
	issue := func() commands.IssuedKey {
		t.Helper()
		k, err := cmds.IssueKey.Handle(ctx, commands.IssueKey{AccountID: acc.AccountID, Service: account.Gateway})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	waitLive := func(pos uint64) time.Duration {
		t.Helper()
		began := time.Now()
		wctx, wcancel := context.WithTimeout(ctx, 4*projections.LeaseTakeover)
		defer wcancel()
		if err := live.WaitFor(wctx, identity.Name, pos); err != nil {
			t.Fatalf("live identity did not reach %d within %s: %v", pos, 4*projections.LeaseTakeover, err)
		}
		return time.Since(began)
	}
	k1 := issue()
	waitLive(k1.Position)

	fz := freezingIdentity{armed: &atomic.Bool{}, frozen: make(chan struct{}), once: &sync.Once{}, release: make(chan struct{})}
	rebuilder, err := projections.NewRunner(pool, st, projections.Config{BatchSize: 100}, fz)
	if err != nil {
		t.Fatal(err)
	}
	var k2 commands.IssuedKey
	var marked sync.Once
	rebuilt := make(chan error, 1)
	go func() {
		rebuilt <- rebuilder.Rebuild(context.Background(), identity.Name, func(done, total uint64) {
			if done >= total { // loaded: what arrives now the swap applies
				marked.Do(func() { fz.armed.Store(true); k2 = issue() })
			}
		})
	}()
	released := false
	defer func() {
		if !released {
			close(fz.release)
			<-rebuilt
		}
	}()
	select {
	case <-fz.frozen:
	case err := <-rebuilt:
		t.Fatalf("the rebuild ended (%v) without reaching its swap's catch-up", err)
	case <-time.After(time.Minute):
		t.Fatal("the rebuild did not reach its swap within a minute")
	}
	pos, err := cmds.RevokeKey.Handle(ctx, commands.RevokeKey{AccountID: acc.AccountID, KeyID: k1.KeyID})
	if err != nil {
		t.Fatal(err)
	}
	took := waitLive(pos)
	t.Logf("a revocation made while the rebuild's swap was frozen was applied %s later (BatchIdle %s)", took.Round(time.Millisecond), projections.BatchIdle)
	q := identity.NewQueries(pool)
	check := func(when string) {
		t.Helper()
		if _, err := q.Authenticate(ctx, k1.Secret, account.Gateway); !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("%s: the revoked key authenticates (%v)", when, err)
		}
		if _, err := q.Authenticate(ctx, k2.Secret, account.Gateway); err != nil {
			t.Fatalf("%s: the key minted during the rebuild: %v", when, err)
		}
	}
	check("while the rebuild is frozen")
	close(fz.release)
	released = true
	if err := <-rebuilt; err == nil {
		t.Fatal("the woken rebuild swapped its read model in")
	}
	check("after the woken rebuild failed")
	fz.armed.Store(false)
	if err := rebuilder.Rebuild(context.Background(), identity.Name, nil); err != nil {
		t.Fatalf("rebuilding again: %v", err)
	}
	check("after the second rebuild")
}
