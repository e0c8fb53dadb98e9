package identity_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/signin"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/identity"
)

// identityDB is a migrated database of the caller's own with the identity
// read model created (schema rm_identity, indexes included).
func identityDB(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	pool, _ := migratetest.NewPool(tb)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	r, err := projections.NewRunner(pool, st, projections.Config{}, identity.Projection{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := r.Setup(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return pool
}

// applyIn runs identity's Apply on events in a transaction on the live
// read model, as the runner does; commit says whether to keep it.
func applyIn(ctx context.Context, pool *pgxpool.Pool, events []projections.Event, commit bool) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `SELECT set_config('search_path', 'rm_identity, public', true)`); err != nil {
		return err
	}
	if err := (identity.Projection{}).Spec().Apply(ctx, tx, events); err != nil {
		return err
	}
	if !commit {
		return nil
	}
	return tx.Commit(ctx)
}

// at is second n of the tests' clock, so a stored time reads back as n.
func at(n int) time.Time { return time.Unix(1_800_000_000+int64(n), 0).UTC() }

// numbered numbers payloads by their place, from first: positions first,
// first+1, ...
func numbered(first int, payloads ...domain.Event) []projections.Event {
	out := make([]projections.Event, len(payloads))
	for i, p := range payloads {
		out[i] = projections.Event{Event: eventstore.Event{Type: p.EventType(), Position: uint64(first + i)}, Payload: p}
	}
	return out
}

// readModel is every row of the identity read model, one line each, times
// as seconds of the tests' clock, "-" for NULL, sorted.
func readModel(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	const n = `coalesce((extract(epoch FROM %s)::bigint - 1800000000)::text, '-')`
	rows, err := pool.Query(context.Background(), `
		SELECT format('account %s %s %s created=%s changed=%s pos=%s', email, plan, coalesce(stripe_customer_id, '-'),
			`+fmt.Sprintf(n, "created_at")+`, `+fmt.Sprintf(n, "plan_changed_at")+`, position) FROM rm_identity.accounts
		UNION ALL
		SELECT format('session %s %s started=%s expires=%s ended=%s pos=%s', token_hash, service,
			`+fmt.Sprintf(n, "started_at")+`, `+fmt.Sprintf(n, "expires_at")+`, `+fmt.Sprintf(n, "ended_at")+`, position) FROM rm_identity.sessions
		UNION ALL
		SELECT format('key %s %s %s %s %s issued=%s revoked=%s pos=%s', secret_hash, service, prefix, hint, name,
			`+fmt.Sprintf(n, "issued_at")+`, `+fmt.Sprintf(n, "revoked_at")+`, position) FROM rm_identity.api_keys`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// notified waits (bounded) for the next notification on identity's
// channel and returns its payload.
func notified(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := conn.WaitForNotification(ctx)
	if err != nil {
		t.Fatalf("waiting for a notification on %s: %v", identity.Channel, err)
	}
	return n.Payload
}

// TestApplyFoldsBatches pins what identity's Apply writes: rows created in
// a batch take that batch's later events (the last plan, the last end,
// the first revocation), rows of earlier batches are updated (a plan
// change keeps a known Stripe customer, an ended session or revoked key
// stays as it was), events of other types are ignored, and only a batch
// that revokes a key or changes a plan of an earlier batch announces
// itself on identity's channel. A second AccountCreated for one account
// fails the batch and changes nothing.
func TestApplyFoldsBatches(t *testing.T) {
	ctx := context.Background()
	pool := identityDB(t)
	listener, err := pgx.Connect(ctx, pool.Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Close(context.Background()) })
	if _, err := listener.Exec(ctx, "LISTEN "+identity.Channel); err != nil {
		t.Fatal(err)
	}
	// marker notifies after a batch, so the next notification says
	// whether that batch announced itself (commit order is delivery order).
	marker := func(name string) {
		t.Helper()
		if _, err := pool.Exec(ctx, `SELECT pg_notify($1, $2)`, identity.Channel, name); err != nil {
			t.Fatal(err)
		}
	}
	a1, a2, a3 := uuid.New(), uuid.New(), uuid.New()
	s1, s2, s3 := uuid.New(), uuid.New(), uuid.New()
	k1, k2, k3 := uuid.New(), uuid.New(), uuid.New()
	key := func(acc, id uuid.UUID, n int) *account.KeyIssued {
		return &account.KeyIssued{AccountID: acc, KeyID: id, Service: account.Gateway, Prefix: "arr_gw_", Hint: fmt.Sprintf("h%d", n),
			SecretHash: fmt.Sprintf("kh%d", n), Name: fmt.Sprintf("n%d", n), IssuedAt: at(n)}
	}
	session := func(acc, id uuid.UUID, n int) *signin.SessionStarted {
		return &signin.SessionStarted{SessionID: id, AccountID: acc, Service: "records", TokenHash: fmt.Sprintf("th%d", n), StartedAt: at(n), ExpiresAt: at(n + 1000)}
	}
	first := numbered(1,
		&account.AccountCreated{AccountID: a1, Email: "a1@example.com", Plan: account.Free, CreatedAt: at(1)},
		&account.AccountCreated{AccountID: a2, Email: "a2@example.com", Plan: account.Free, CreatedAt: at(2)},
		session(a1, s1, 3), key(a1, k1, 4), key(a2, k2, 5), session(a2, s2, 6),
		&account.AccountCreated{AccountID: a3, Email: "a3@example.com", Plan: account.Free, CreatedAt: at(7)},
		&account.PlanChanged{AccountID: a3, From: account.Free, To: "pro", StripeCustomerID: "cus_3", ChangedAt: at(8)},
		&account.PlanChanged{AccountID: a3, From: "pro", To: "team", ChangedAt: at(9)},
		key(a3, k3, 10),
		&account.KeyRevoked{AccountID: a3, KeyID: k3, RevokedAt: at(11)},
		&account.KeyRevoked{AccountID: a3, KeyID: k3, RevokedAt: at(12)},
		session(a3, s3, 13),
		&signin.SessionEnded{SessionID: s3, AccountID: a3, EndedAt: at(14)},
		&signin.SessionEnded{SessionID: s3, AccountID: a3, EndedAt: at(15)},
	)
	if err := applyIn(ctx, pool, first, true); err != nil {
		t.Fatal(err)
	}
	marker("after-first")
	want := []string{
		"account a1@example.com free - created=1 changed=- pos=1",
		"account a2@example.com free - created=2 changed=- pos=2",
		"account a3@example.com team cus_3 created=7 changed=9 pos=9",
		"key kh10 gateway arr_gw_ h10 n10 issued=10 revoked=11 pos=11",
		"key kh4 gateway arr_gw_ h4 n4 issued=4 revoked=- pos=4",
		"key kh5 gateway arr_gw_ h5 n5 issued=5 revoked=- pos=5",
		"session th13 records started=13 expires=1013 ended=15 pos=15",
		"session th3 records started=3 expires=1003 ended=- pos=3",
		"session th6 records started=6 expires=1006 ended=- pos=6",
	}
	if got := readModel(t, pool); !slices.Equal(got, want) {
		t.Fatalf("after the first batch:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	if got := notified(t, listener); got != "after-first" {
		t.Fatalf("a batch of new rows only announced itself (%q): it must not", got)
	}

	second := numbered(16,
		&account.PlanChanged{AccountID: a1, From: account.Free, To: "pro", StripeCustomerID: "cus_1", ChangedAt: at(16)},
		&account.PlanChanged{AccountID: a1, From: "pro", To: "team", ChangedAt: at(17)},
		&account.PlanChanged{AccountID: a2, From: account.Free, To: "pro", ChangedAt: at(18)},
		&signin.SessionEnded{SessionID: s1, AccountID: a1, EndedAt: at(19)},
		&account.KeyRevoked{AccountID: a1, KeyID: k1, RevokedAt: at(20)},
		&account.KeyRevoked{AccountID: a3, KeyID: k3, RevokedAt: at(21)},
		&signin.SessionEnded{SessionID: s3, AccountID: a3, EndedAt: at(22)},
	)
	second = append(second, projections.Event{Event: eventstore.Event{Type: "CallsCounted", Position: 23}})
	if err := applyIn(ctx, pool, second, true); err != nil {
		t.Fatal(err)
	}
	marker("after-second")
	want = []string{
		"account a1@example.com team cus_1 created=1 changed=17 pos=17",
		"account a2@example.com pro - created=2 changed=18 pos=18",
		"account a3@example.com team cus_3 created=7 changed=9 pos=9",
		"key kh10 gateway arr_gw_ h10 n10 issued=10 revoked=11 pos=11",
		"key kh4 gateway arr_gw_ h4 n4 issued=4 revoked=20 pos=20",
		"key kh5 gateway arr_gw_ h5 n5 issued=5 revoked=- pos=5",
		"session th13 records started=13 expires=1013 ended=15 pos=15",
		"session th3 records started=3 expires=1003 ended=19 pos=19",
		"session th6 records started=6 expires=1006 ended=- pos=6",
	}
	if got := readModel(t, pool); !slices.Equal(got, want) {
		t.Fatalf("after the second batch:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	if got := notified(t, listener); got != "" {
		t.Fatalf("a batch that revokes keys and changes plans did not announce itself (next notification %q)", got)
	}
	if got := notified(t, listener); got != "after-second" {
		t.Fatalf("after the second batch's announcement, got %q", got)
	}

	again := numbered(24, &account.AccountCreated{AccountID: a1, Email: "a1@example.com", Plan: account.Free, CreatedAt: at(24)})
	err = applyIn(ctx, pool, again, true)
	if err == nil || !strings.HasPrefix(err.Error(), "inserting accounts: ") {
		t.Fatalf("a second AccountCreated for one account: got %v, want an error starting %q", err, "inserting accounts: ")
	}
	if got := readModel(t, pool); !slices.Equal(got, want) {
		t.Fatalf("a failed batch changed the read model:\n got %s", strings.Join(got, "\n     "))
	}
}

// BenchmarkApply applies one batch of 2,000 mixed identity events (new
// accounts, keys and sessions, plan changes, revocations and session ends
// of rows in the batch and of earlier ones) to a real database, rolled
// back after each run so every run sees the same read model.
func BenchmarkApply(b *testing.B) {
	ctx := context.Background()
	pool := identityDB(b)
	seed, batch := mixedBatches(200)
	if err := applyIn(ctx, pool, seed, true); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := applyIn(ctx, pool, batch, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(batch)*b.N)/b.Elapsed().Seconds(), "events/s")
}

// mixedBatches returns a seed batch of n accounts, each with a key and a
// session, and a batch of 10n events: n new accounts, each with a plan
// change, a key revoked in the batch and a session ended in it, plus a plan
// change, a revocation and a session end for each seeded account.
func mixedBatches(n int) (seed, batch []projections.Event) {
	var seedP, batchP []domain.Event
	for i := range n {
		old, fresh := uuid.New(), uuid.New()
		oldKey, oldSess, freshKey, freshSess := uuid.New(), uuid.New(), uuid.New(), uuid.New()
		seedP = append(seedP,
			&account.AccountCreated{AccountID: old, Email: fmt.Sprintf("old%d@example.com", i), Plan: account.Free, CreatedAt: at(i)},
			&account.KeyIssued{AccountID: old, KeyID: oldKey, Service: account.Gateway, Prefix: "arr_gw_", Hint: "abcd", SecretHash: fmt.Sprintf("old-key-%d", i), IssuedAt: at(i)},
			&signin.SessionStarted{SessionID: oldSess, AccountID: old, Service: "records", TokenHash: fmt.Sprintf("old-sess-%d", i), StartedAt: at(i), ExpiresAt: at(i + 3600)},
		)
		batchP = append(batchP,
			&account.AccountCreated{AccountID: fresh, Email: fmt.Sprintf("new%d@example.com", i), Plan: account.Free, CreatedAt: at(i)},
			&account.PlanChanged{AccountID: fresh, From: account.Free, To: "pro", StripeCustomerID: fmt.Sprintf("cus_new%d", i), ChangedAt: at(i + 1)},
			&account.KeyIssued{AccountID: fresh, KeyID: freshKey, Service: account.Records, Prefix: "arr_rec_", Hint: "wxyz", SecretHash: fmt.Sprintf("new-key-%d", i), IssuedAt: at(i)},
			&account.KeyRevoked{AccountID: fresh, KeyID: freshKey, RevokedAt: at(i + 2)},
			&signin.SessionStarted{SessionID: freshSess, AccountID: fresh, Service: "records", TokenHash: fmt.Sprintf("new-sess-%d", i), StartedAt: at(i), ExpiresAt: at(i + 3600)},
			&signin.SessionEnded{SessionID: freshSess, AccountID: fresh, EndedAt: at(i + 3)},
			&account.PlanChanged{AccountID: old, From: account.Free, To: "pro", StripeCustomerID: fmt.Sprintf("cus_old%d", i), ChangedAt: at(i + 1)},
			&account.KeyRevoked{AccountID: old, KeyID: oldKey, RevokedAt: at(i + 2)},
			&signin.SessionEnded{SessionID: oldSess, AccountID: old, EndedAt: at(i + 3)},
			&account.KeyIssued{AccountID: old, KeyID: uuid.New(), Service: account.Answer, Prefix: "arr_ans_", Hint: "efgh", SecretHash: fmt.Sprintf("old-key2-%d", i), IssuedAt: at(i + 4)},
		)
	}
	return numbered(1, seedP...), numbered(len(seedP)+1, batchP...)
}
