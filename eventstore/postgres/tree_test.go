package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// checkStoreTree recomputes the tree from the log's events and compares it
// with what the store keeps: every leaf hash, every stored interior node,
// the root, and inclusion proofs of some leaves.
func checkStoreTree(t testing.TB, s *postgres.Store, wantSize uint64) {
	t.Helper()
	ctx := context.Background()
	size, root, err := s.TreeHead(ctx)
	if err != nil {
		t.Fatalf("tree head: %v", err)
	}
	if size != wantSize {
		t.Fatalf("tree size %d, want %d", size, wantSize)
	}
	tree := transparency.NewTree()
	var h eventstore.LeafHasher
	var leaves [][]byte
	var interior []transparency.Node // recomputed nodes of level >= 1
	for uint64(len(leaves)) < size {
		batch, err := s.ReadLeaves(ctx, uint64(len(leaves)), 10_000)
		if err != nil || len(batch) == 0 {
			t.Fatalf("read leaves after %d: %d, %v", len(leaves), len(batch), err)
		}
		for _, l := range batch {
			if l.Position != uint64(len(leaves))+1 {
				t.Fatalf("event at position %d follows %d", l.Position, len(leaves))
			}
			lh, err := h.HashEvent(l.Event)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(l.LeafHash, lh[:]) {
				t.Fatalf("event %d: stored leaf hash %x, content hashes to %x", l.Position, l.LeafHash, lh)
			}
			leaves = append(leaves, lh[:])
			nodes, err := tree.Append(lh)
			if err != nil {
				t.Fatal(err)
			}
			interior = append(interior, nodes[1:]...)
		}
	}
	if tree.Root() != root {
		t.Fatalf("stored root %x, the events give %x", root, tree.Root())
	}
	// Every interior node, stored (level >= 4) or folded from leaves.
	for len(interior) > 0 {
		chunk := interior[:min(len(interior), 100)]
		interior = interior[len(chunk):]
		ids := make([]transparency.NodeID, len(chunk))
		for i, n := range chunk {
			ids[i] = n.NodeID
		}
		got, err := s.ReadNodes(ctx, ids)
		if err != nil {
			t.Fatalf("read nodes: %v", err)
		}
		for i, n := range chunk {
			if got[i] != n.Hash {
				t.Fatalf("node %s: read %x, want %x", n.NodeID, got[i], n.Hash)
			}
		}
	}
	for range 20 {
		if size == 0 {
			break
		}
		i := rand.Uint64N(size)
		proof, err := transparency.InclusionProof(ctx, s, i, size)
		if err != nil {
			t.Fatal(err)
		}
		if err := verifier.VerifyInclusion(i, size, leaves[i], proof, root[:]); err != nil {
			t.Fatalf("inclusion of leaf %d: %v", i, err)
		}
	}
}

func newStore(t testing.TB, pool *pgxpool.Pool) *postgres.Store {
	t.Helper()
	s, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// insertLegacy writes n events the way an arr without the tree did: no
// leaf hash, the head moved, the tree not.
func insertLegacy(t testing.TB, pool *pgxpool.Pool, n int) {
	t.Helper()
	_, err := pool.Exec(context.Background(), `
		WITH h AS (SELECT position FROM event_log_head)
		INSERT INTO events (position, event_id, stream_id, stream_version, event_type, schema_version, data, correlation_id, actor, recorded_at)
		SELECT h.position + g, gen_random_uuid(), 'legacy-' || (h.position + g), 0, 'LegacyHappened', 1,
			json_build_object('g', g, 'note', 'from before the tree')::json, CASE WHEN g % 2 = 0 THEN 'corr-' || g END, 'old <arr> & co', now()
		FROM h, generate_series(1, $1::int) AS g`, n)
	if err == nil {
		_, err = pool.Exec(context.Background(), `UPDATE event_log_head SET position = position + $1`, n)
	}
	if err != nil {
		t.Fatalf("inserting legacy events: %v", err)
	}
}

// A log written before the tree existed (or by an arr without it) is caught
// up: explicitly, or by the next append, in chunks; after that every event
// is a leaf.
func TestTreeCatchUp(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	s := newStore(t, pool)
	ctx := context.Background()
	if _, err := s.Append(ctx, "before", eventstore.NoStream(), newEvents(3)...); err != nil {
		t.Fatal(err)
	}
	insertLegacy(t, pool, 45_000) // more than two catch-up chunks
	if size, _, _ := s.TreeHead(ctx); size != 3 {
		t.Fatalf("tree size %d before catching up, want 3", size)
	}
	if _, err := s.Append(ctx, "after", eventstore.NoStream(), newEvents(2)...); err != nil {
		t.Fatalf("append on a log the tree is behind: %v", err)
	}
	checkStoreTree(t, s, 45_005)

	insertLegacy(t, pool, 10)
	if err := s.CatchUpTree(ctx); err != nil {
		t.Fatal(err)
	}
	checkStoreTree(t, s, 45_015)
}

// The immutability trigger lets a leaf hash be set once, on an event that
// has none, and nothing else.
func TestLeafHashSetOnce(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	s := newStore(t, pool)
	ctx := context.Background()
	if _, err := s.Append(ctx, "once", eventstore.NoStream(), newEvents(1)...); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO event_tree_heads (size, root, timestamp_ms, origin, verifier_key, checkpoint) VALUES (0, sha256(''), 0, 'o', 'k', 'c')`); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE events SET leaf_hash = sha256('x') WHERE position = 1`,
		`UPDATE events SET data = '{"x":1}' WHERE position = 1`,
		`DELETE FROM events WHERE position = 1`,
		`UPDATE event_tree_heads SET size = 1`,
	} {
		if _, err := pool.Exec(ctx, stmt); err == nil || !strings.Contains(err.Error(), "immutable") {
			t.Errorf("%s: err = %v, want the immutability error", stmt, err)
		}
	}
	insertLegacy(t, pool, 1)
	if _, err := pool.Exec(ctx, `UPDATE events SET leaf_hash = sha256('x'), actor = 'changed' WHERE position = 2`); err == nil {
		t.Errorf("setting a leaf hash and changing the event was allowed")
	}
	if _, err := pool.Exec(ctx, `UPDATE events SET leaf_hash = sha256('x') WHERE position = 2`); err != nil {
		t.Errorf("setting a missing leaf hash: %v", err)
	}
	// That hash is not the event's: catching up refuses to build on it,
	// and so do appends.
	if err := s.CatchUpTree(ctx); err == nil || !strings.Contains(err.Error(), "arr events verify") {
		t.Fatalf("catch-up over a wrong leaf hash: %v", err)
	}
	if _, err := s.Append(ctx, "refused", eventstore.NoStream(), newEvents(1)...); err == nil {
		t.Fatalf("append over a wrong leaf hash succeeded")
	}
}

func newEvents(n int) []eventstore.NewEvent {
	out := make([]eventstore.NewEvent, n)
	for i := range out {
		out[i] = eventstore.NewEvent{ID: uuid.New(), Type: "TreeTested", SchemaVersion: 1,
			Data: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), Metadata: eventstore.Metadata{Actor: "test"}}
	}
	return out
}
