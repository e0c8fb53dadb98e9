package storetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

var merkleTests = []contractTest{
	{"merkle: every event is a leaf, single, grouped and bulk", testMerkleLeaves},
	{"merkle: inclusion and consistency proofs verify", testMerkleProofs},
}

func testNoMerkleTree(t *testing.T, s eventstore.Store) {
	if _, ok := s.(eventstore.MerkleLog); ok {
		t.Fatalf("%T claims to be an eventstore.MerkleLog but the suite was told it keeps no tree", s)
	}
}

func merkle(t testing.TB, s eventstore.Store) eventstore.MerkleLog {
	t.Helper()
	m, ok := s.(eventstore.MerkleLog)
	if !ok {
		t.Fatalf("%T is not an eventstore.MerkleLog", s)
	}
	return m
}

// checkTree reads the whole log up to the tree's size and checks that
// every stored leaf hash is the hash of its event as read, positions are
// 1..size, and the root is the RFC 6962 root of those leaves. It returns
// the size and leaf hashes.
func checkTree(t testing.TB, m eventstore.MerkleLog) (uint64, [][]byte) {
	t.Helper()
	size, root, err := m.TreeHead(ctx(t))
	if err != nil {
		t.Fatalf("tree head: %v", err)
	}
	var leaves [][]byte
	var h eventstore.LeafHasher
	for uint64(len(leaves)) < size {
		batch, err := m.ReadLeaves(ctx(t), uint64(len(leaves)), 5000)
		if err != nil {
			t.Fatalf("read leaves: %v", err)
		}
		if len(batch) == 0 {
			t.Fatalf("the log ends at %d events, the tree has %d leaves", len(leaves), size)
		}
		for _, l := range batch {
			if uint64(len(leaves)) == size {
				break
			}
			if l.Position != uint64(len(leaves))+1 {
				t.Fatalf("leaf %d is the event at position %d, want %d", len(leaves), l.Position, len(leaves)+1)
			}
			want, err := h.HashEvent(l.Event)
			if err != nil {
				t.Fatalf("hashing event %d: %v", l.Position, err)
			}
			if !bytes.Equal(l.LeafHash, want[:]) {
				t.Fatalf("event %d (%s): stored leaf hash %x, its content hashes to %x", l.Position, l.StreamID, l.LeafHash, want)
			}
			// The leaf is also what verifier.LeafData encodes from the
			// event as ReadAll returns it (metadata as JSON).
			if data, err := verifier.LeafData(eventstore.Leaf(l.Event)); err != nil || verifier.LeafHash(data) != want {
				t.Fatalf("event %d: LeafHasher and verifier.LeafData disagree (%v)", l.Position, err)
			}
			leaves = append(leaves, want[:])
		}
	}
	want, err := verifier.RootFromLeafHashes(leaves)
	if err != nil {
		t.Fatal(err)
	}
	if want != root {
		t.Fatalf("tree root at %d is %x, the events' leaves give %x", size, root, want)
	}
	return size, leaves
}

func testMerkleLeaves(t *testing.T, s eventstore.Store) {
	m := merkle(t, s)
	id := stream(t, "merkle")
	// Metadata with every escape the leaf's metadata JSON knows.
	md := eventstore.Metadata{CorrelationID: "c<1>&\"q\"", CausationID: "tab\there\nnl", Actor: "key:\u2028x\\y", RequestID: "é"}
	e0 := ev(t, "Merkled", 0)
	e0.Metadata = md
	e0.Data = json.RawMessage(`{ "spaced" : [1, 2 ,3], "u": "\u00e9" }`) // stored and hashed byte for byte
	mustAppend(t, s, id, eventstore.NoStream(), e0)
	// Concurrent appends form group commits.
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				if _, err := s.Append(ctx(t), fmt.Sprintf("%s-w%d", id, w), eventstore.Any(), ev(t, "Merkled", i)); err != nil {
					t.Errorf("append: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	// Bulk appends by both of the PostgreSQL store's paths (INSERT below
	// 256 events, COPY above).
	for _, n := range []int{7, 700} {
		if _, err := s.AppendBulk(ctx(t), []eventstore.Append{{StreamID: fmt.Sprintf("%s-bulk%d", id, n), Expected: eventstore.NoStream(), Events: evs(t, n)}}); err != nil {
			t.Fatalf("bulk of %d: %v", n, err)
		}
	}
	got := readStream(t, s, id)
	if len(got) != 1 || string(got[0].Data) != string(e0.Data) || got[0].Metadata != md {
		t.Fatalf("read back %+v", got)
	}
	size, _ := checkTree(t, m)
	if size < 1+80+707 {
		t.Fatalf("tree of %d leaves after %d appended events", size, 1+80+707)
	}
}

func testMerkleProofs(t *testing.T, s eventstore.Store) {
	m := merkle(t, s)
	id := stream(t, "proofs")
	r1 := mustAppend(t, s, id, eventstore.NoStream(), evs(t, 5)...)
	size1, root1, err := m.TreeHead(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendBulk(ctx(t), []eventstore.Append{{StreamID: id, Expected: eventstore.Exact(4), Events: evs(t, 300)}}); err != nil {
		t.Fatal(err)
	}
	size2, leaves := checkTree(t, m)
	root2, err := verifier.RootFromLeafHashes(leaves)
	if err != nil {
		t.Fatal(err)
	}
	for pos := r1.FirstPosition; pos <= r1.LastPosition; pos++ {
		for _, size := range []uint64{size1, size2} {
			proof, err := transparency.InclusionProof(ctx(t), m, pos-1, size)
			if err != nil {
				t.Fatalf("inclusion proof of %d in %d: %v", pos, size, err)
			}
			root := root2
			if size == size1 {
				root = root1
			}
			if err := verifier.VerifyInclusion(pos-1, size, leaves[pos-1], proof, root[:]); err != nil {
				t.Fatalf("inclusion of position %d in %d: %v", pos, size, err)
			}
		}
	}
	proof, err := transparency.ConsistencyProof(ctx(t), m, size1, size2)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifier.VerifyConsistency(size1, size2, root1[:], root2[:], proof); err != nil {
		t.Fatalf("consistency %d -> %d: %v", size1, size2, err)
	}
	// A node beyond the tree is not found.
	if _, err := m.ReadNodes(ctx(t), []transparency.NodeID{{Level: 0, Index: size2 + 1_000_000}}); err == nil {
		t.Fatalf("read a leaf far beyond the tree")
	}
}
