package signedlog_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/eventstore/signedlog"
	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
	"github.com/arr-dev/arr/migrations/migratetest"
)

const origin = "arr.test/log"

func testKey() ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	return ed25519.NewKeyFromSeed(seed)
}

type fixture struct {
	pool  *pgxpool.Pool
	store *postgres.Store
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	s, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &fixture{pool: pool, store: s}
}

func (f *fixture) appendN(t testing.TB, n int) {
	t.Helper()
	events := make([]eventstore.NewEvent, n)
	for i := range events {
		events[i] = eventstore.NewEvent{ID: uuid.New(), Type: "Logged", SchemaVersion: 1,
			Data: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), Metadata: eventstore.Metadata{Actor: "test"}}
	}
	if _, err := f.store.AppendBulk(context.Background(), []eventstore.Append{{StreamID: "s-" + uuid.NewString(), Expected: eventstore.NoStream(), Events: events}}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) signer(t testing.TB, cfg signedlog.SignerConfig) *signedlog.Signer {
	t.Helper()
	cfg.Key, cfg.Origin = testKey(), origin
	s, err := signedlog.NewSigner(f.store, f.store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openHead checks a kept head's checkpoint with the published verifier key
// only, as an auditor would.
func openHead(t testing.TB, vkey string, h eventstore.SignedHead) verifier.Head {
	t.Helper()
	name, pub, err := verifier.ParseVerifierKey(vkey)
	if err != nil {
		t.Fatal(err)
	}
	got, err := verifier.OpenCheckpoint(h.Checkpoint, name, pub)
	if err != nil {
		t.Fatalf("checkpoint of size %d: %v", h.Size, err)
	}
	if got != h.Head {
		t.Fatalf("checkpoint says %+v, the kept head %+v", got, h.Head)
	}
	return got
}

func TestSignOnDemand(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := f.signer(t, signedlog.SignerConfig{})
	h0, fresh, err := s.Sign(ctx)
	if err != nil || !fresh || h0.Size != 0 || h0.Root != verifier.EmptyRoot() {
		t.Fatalf("head of the empty log = %+v, %v, %v", h0.Head, fresh, err)
	}
	f.appendN(t, 300)
	h1, fresh, err := s.Sign(ctx)
	if err != nil || !fresh || h1.Size != 300 {
		t.Fatalf("head = %+v, %v, %v", h1.Head, fresh, err)
	}
	openHead(t, s.VerifierKey(), h1)
	again, fresh, err := s.Sign(ctx)
	if err != nil || fresh || again.Size != 300 || string(again.Checkpoint) != string(h1.Checkpoint) {
		t.Fatalf("signing with nothing new = %+v, fresh %v, %v; want the kept head", again.Head, fresh, err)
	}
	heads, err := f.store.HeadsSince(ctx, 1, 10)
	if err != nil || len(heads) != 1 || heads[0].Size != 300 {
		t.Fatalf("heads since 0 = %v, %v", heads, err)
	}
}

func TestSignerRun(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := f.signer(t, signedlog.SignerConfig{Every: 50, Interval: 300 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	waitHead := func(size uint64) eventstore.SignedHead {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if h, ok, err := f.store.HeadAt(context.Background(), size); err != nil {
				t.Fatal(err)
			} else if ok {
				return h
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no head of size %d was signed", size)
		return eventstore.SignedHead{}
	}
	waitHead(0)
	start := time.Now()
	f.appendN(t, 60) // Every: at once
	waitHead(60)
	if el := time.Since(start); el > 250*time.Millisecond {
		t.Logf("the head after Every events took %s", el)
	}
	f.appendN(t, 3) // below Every: after Interval
	h := waitHead(63)
	openHead(t, s.VerifierKey(), h)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	heads, err := f.store.HeadsSince(context.Background(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, h := range heads {
		if h.Timestamp < last {
			t.Fatalf("head timestamps go back: %v", heads)
		}
		last = h.Timestamp
	}
}

func TestProofs(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := f.signer(t, signedlog.SignerConfig{})
	p, err := signedlog.NewProver(f.store, f.store)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Inclusion(ctx, 1, 0); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("inclusion with no signed head: %v, want not found", err)
	}
	f.appendN(t, 37)
	a, _, err := s.Sign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.appendN(t, 1000)
	b, _, err := s.Sign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ha, hb := openHead(t, s.VerifierKey(), a), openHead(t, s.VerifierKey(), b)
	var h eventstore.LeafHasher
	for _, pos := range []uint64{1, 2, 17, 36, 37, 38, 500, 1037} {
		for _, head := range []verifier.Head{ha, hb} {
			if pos > head.Size {
				continue
			}
			proof, err := p.Inclusion(ctx, pos, head.Size)
			if err != nil {
				t.Fatalf("inclusion of %d in %d: %v", pos, head.Size, err)
			}
			// The auditor rebuilds the leaf from the event itself.
			evs, err := f.store.ReadAll(ctx, pos-1, 1)
			if err != nil || len(evs) != 1 {
				t.Fatal(err)
			}
			lh, _ := h.HashEvent(evs[0])
			if lh != proof.LeafHash || proof.Signed == nil || proof.Signed.Size != head.Size {
				t.Fatalf("proof of %d: leaf %x, event gives %x; signed %v", pos, proof.LeafHash, lh, proof.Signed)
			}
			if err := verifier.VerifyInclusion(pos-1, head.Size, lh[:], proof.Path, head.Root[:]); err != nil {
				t.Fatalf("inclusion of %d in %d: %v", pos, head.Size, err)
			}
		}
	}
	latest, err := p.Inclusion(ctx, 5, 0)
	if err != nil || latest.Size != hb.Size {
		t.Fatalf("inclusion at the default size: %+v, %v", latest, err)
	}
	c, err := p.Consistency(ctx, ha.Size, hb.Size)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifier.VerifyConsistency(ha.Size, hb.Size, ha.Root[:], hb.Root[:], c.Path); err != nil {
		t.Fatalf("consistency %d -> %d: %v", ha.Size, hb.Size, err)
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"position 0", func() error { _, err := p.Inclusion(ctx, 0, 10); return err }()},
		{"position beyond size", func() error { _, err := p.Inclusion(ctx, 11, 10); return err }()},
		{"size beyond the tree", func() error { _, err := p.Inclusion(ctx, 1, 5000); return err }()},
		{"first above second", func() error { _, err := p.Consistency(ctx, 20, 10); return err }()},
		{"second beyond the tree", func() error { _, err := p.Consistency(ctx, 1, 5000); return err }()},
	} {
		if !errors.Is(tc.err, domain.ErrInvalid) {
			t.Errorf("%s: %v, want an invalid-input error", tc.name, tc.err)
		}
	}
}

func heads(t testing.TB, hs ...eventstore.SignedHead) []verifier.Head {
	out := make([]verifier.Head, len(hs))
	for i, h := range hs {
		out[i] = h.Head
	}
	return out
}

func TestVerifyIntactLog(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := f.signer(t, signedlog.SignerConfig{})
	f.appendN(t, 1234)
	a, _, _ := s.Sign(ctx)
	f.appendN(t, 99)
	var progress uint64
	rep, err := signedlog.Verify(ctx, f.store, signedlog.VerifyOptions{Heads: heads(t, a), Batch: 100, Progress: func(d, _ uint64) { progress = d }})
	if err != nil || !rep.OK || rep.Checked != 1333 || rep.TreeSize != 1333 || len(rep.HeadsMatched) != 1 || progress != 1333 {
		t.Fatalf("verify = %+v, %v", rep, err)
	}
	rep, err = signedlog.Verify(ctx, f.store, signedlog.VerifyOptions{From: 1000, Heads: heads(t, a)})
	if err != nil || !rep.OK || rep.Checked != 334 || rep.From != 1000 {
		t.Fatalf("verify from 1000 = %+v, %v", rep, err)
	}
}

// rewrite changes the event at pos and rebuilds everything arr stores
// about the tree from there on, as someone who knows arr's code could: the
// stored tree is then consistent with the changed events, and only signed
// heads can tell.
func rewrite(t testing.TB, f *fixture, pos uint64) {
	t.Helper()
	ctx := context.Background()
	prefix, err := transparency.LoadTree(ctx, f.store, pos-1)
	if err != nil {
		t.Fatal(err)
	}
	var frontier []byte
	for _, n := range prefix.Frontier() {
		frontier = append(frontier, n.Hash[:]...)
	}
	tx, err := f.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`SET LOCAL session_replication_role = replica`, nil}, // no triggers
		{`UPDATE events SET data = '{"i":"rewritten"}' WHERE position = $1`, []any{int64(pos)}},
		{`UPDATE events SET leaf_hash = NULL WHERE position >= $1`, []any{int64(pos)}},
		{`DELETE FROM event_tree_nodes WHERE (idx + 1) << level >= $1`, []any{int64(pos)}},
		{`UPDATE event_log_head SET tree_size = $1, tree_frontier = $2`, []any{int64(pos - 1), frontier}},
	} {
		if _, err := tx.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.store.CatchUpTree(ctx); err != nil {
		t.Fatalf("rebuilding the tree: %v", err)
	}
}

// After a rewrite, arr refuses to sign over it; a head signed anyway (by
// whoever holds the key) fails the consistency proof from an earlier head,
// and Verify brackets the change between heads.
func TestRewriteIsCaughtByHeads(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	s := f.signer(t, signedlog.SignerConfig{})
	f.appendN(t, 100)
	a, _, _ := s.Sign(ctx)
	f.appendN(t, 100)
	rewrite(t, f, 30)
	if _, _, err := s.Sign(ctx); !errors.Is(err, signedlog.ErrInconsistent) {
		t.Fatalf("signing over a rewritten log: %v, want ErrInconsistent", err)
	}
	size, root, err := f.store.TreeHead(ctx)
	if err != nil || size != 200 {
		t.Fatal(size, err)
	}
	forged := verifier.Head{Origin: origin, Size: size, Root: root, Timestamp: time.Now().UnixMilli()}
	note, err := transparency.SignCheckpoint(testKey(), forged)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.SaveHead(ctx, eventstore.SignedHead{Head: forged, Checkpoint: note, VerifierKey: s.VerifierKey()}); err != nil {
		t.Fatal(err)
	}
	p, _ := signedlog.NewProver(f.store, f.store)
	c, err := p.Consistency(ctx, a.Size, forged.Size)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifier.VerifyConsistency(a.Size, forged.Size, a.Root[:], forged.Root[:], c.Path); err == nil {
		t.Fatalf("a consistency proof from the head before the rewrite verified")
	}
	rep, err := signedlog.Verify(ctx, f.store, signedlog.VerifyOptions{Heads: heads(t, a)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || rep.Problem.Kind != signedlog.Unsigned || rep.Problem.Upto != 100 || rep.Problem.After != 0 {
		t.Fatalf("verify after a rewrite = %+v %+v", rep, rep.Problem)
	}
	// Without a head, the rewritten tree is self-consistent: nothing to
	// catch it with.
	if rep, err := signedlog.Verify(ctx, f.store, signedlog.VerifyOptions{}); err != nil || !rep.OK {
		t.Fatalf("verify without heads = %+v, %v", rep, err)
	}
}

// A leaf hash rewritten to match a changed event, with the stored nodes
// left alone, is caught by the node over it.
func TestRewrittenLeafCaughtByNode(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.appendN(t, 100)
	tx, err := f.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE events SET data = '{"i":"changed"}' WHERE position = 40`); err != nil {
		t.Fatal(err)
	}
	evs, err := f.store.ReadAll(ctx, 39, 1)
	if err != nil {
		t.Fatal(err)
	}
	evs[0].Data = json.RawMessage(`{"i":"changed"}`)
	var h eventstore.LeafHasher
	lh, _ := h.HashEvent(evs[0])
	if _, err := tx.Exec(ctx, `UPDATE events SET leaf_hash = $1 WHERE position = 40`, lh[:]); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := signedlog.Verify(ctx, f.store, signedlog.VerifyOptions{})
	if err != nil || rep.OK || rep.Problem.Kind != signedlog.Rewritten || rep.Problem.After != 32 || rep.Problem.Upto != 48 {
		t.Fatalf("verify = %+v %+v, %v", rep, rep.Problem, err)
	}
}

// TestCheckConsistencySizes: RFC 9162's bounds for PROOF(first,
// D[second]), whichever way second is given.
func TestCheckConsistencySizes(t *testing.T) {
	tests := []struct {
		name          string
		first, second uint64
		secondGiven   bool
		code          string // "" accepted
	}{
		{"first 0, second 0", 0, 0, true, "invalid_first"},
		{"first 0, second left out", 0, 0, false, "invalid_first"},
		{"first 0, second 5", 0, 5, true, "invalid_first"},
		{"second 0 given", 5, 0, true, "invalid_second"},
		{"second 0 given, first 1", 1, 0, true, "invalid_second"},
		{"first above second", 6, 5, true, "first_above_second"},
		{"equal sizes: an empty proof", 5, 5, true, ""},
		{"first below second", 1, 5, true, ""},
		{"second left out", 5, 0, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := signedlog.CheckConsistencySizes(tc.first, tc.second, tc.secondGiven)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("CheckConsistencySizes(%d, %d, %v) = %v, want nil", tc.first, tc.second, tc.secondGiven, err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) || de.Code != tc.code {
				t.Fatalf("CheckConsistencySizes(%d, %d, %v) = %v, want %s", tc.first, tc.second, tc.secondGiven, err, tc.code)
			}
		})
	}
}
