package transparency_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

func TestTreeRootsVectors(t *testing.T) {
	tree := transparency.NewTree()
	if tree.Root() != verifier.EmptyRoot() {
		t.Fatalf("empty tree root %x", tree.Root())
	}
	for i, l := range vectorLeaves {
		if _, err := tree.Append(verifier.LeafHash(unhex(t, l))); err != nil {
			t.Fatal(err)
		}
		if got := tree.Root(); fmt.Sprintf("%x", got) != vectorRoots[i] {
			t.Errorf("root of %d leaves = %x, want %s", i+1, got, vectorRoots[i])
		}
		if tree.Size() != uint64(i+1) {
			t.Errorf("size = %d, want %d", tree.Size(), i+1)
		}
	}
}

// TestAppendCompletesNodes checks that each append returns exactly the
// nodes CompletedBy names, each with the Merkle hash of the leaves it
// covers, and that the frontier is the tree's perfect subtrees.
func TestAppendCompletesNodes(t *testing.T) {
	leaves := testLeaves(70)
	all := slices32(leaves)
	tree := transparency.NewTree()
	for i, l := range leaves {
		nodes, err := tree.Append(l)
		if err != nil {
			t.Fatal(err)
		}
		ids := transparency.CompletedBy(uint64(i))
		if len(nodes) != len(ids) {
			t.Fatalf("leaf %d completed %d nodes, CompletedBy names %d", i, len(nodes), len(ids))
		}
		for j, n := range nodes {
			if n.NodeID != ids[j] {
				t.Fatalf("leaf %d: node %d is %s, CompletedBy says %s", i, j, n.NodeID, ids[j])
			}
			lo, hi := n.Index<<n.Level, (n.Index+1)<<n.Level
			if hi != uint64(i+1) {
				t.Fatalf("leaf %d completed node %s, whose last leaf is %d", i, n.NodeID, hi-1)
			}
			if want := naiveRoot(t, all[lo:hi]); n.Hash != want {
				t.Fatalf("node %s hash %x, want %x", n.NodeID, n.Hash, want)
			}
		}
		var lo uint64
		for _, f := range tree.Frontier() {
			hi := lo + 1<<f.Level
			if f.Index<<f.Level != lo || f.Hash != naiveRoot(t, all[lo:hi]) {
				t.Fatalf("size %d: frontier node %s does not cover leaves from %d", i+1, f.NodeID, lo)
			}
			lo = hi
		}
		if lo != uint64(i+1) {
			t.Fatalf("size %d: frontier covers %d leaves", i+1, lo)
		}
	}
}

func TestCompletedBy(t *testing.T) {
	tests := []struct {
		index uint64
		want  string
	}{
		{0, "[0/0]"},
		{1, "[0/1 1/0]"},
		{2, "[0/2]"},
		{3, "[0/3 1/1 2/0]"},
		{6, "[0/6]"},
		{7, "[0/7 1/3 2/1 3/0]"},
		{1<<64 - 2, "[0/18446744073709551614]"},
	}
	for _, tc := range tests {
		if got := fmt.Sprint(transparency.CompletedBy(tc.index)); got != tc.want {
			t.Errorf("CompletedBy(%d) = %s, want %s", tc.index, got, tc.want)
		}
	}
	if got := len(transparency.CompletedBy(1<<64 - 1)); got != 65 {
		t.Errorf("CompletedBy(2^64-1) has %d nodes, want 65", got)
	}
}

func TestFrontierIDs(t *testing.T) {
	tests := []struct {
		size uint64
		want string
	}{
		{0, "[]"},
		{1, "[0/0]"},
		{6, "[2/0 1/2]"},
		{7, "[2/0 1/2 0/6]"},
		{8, "[3/0]"},
		{1<<63 + 1, "[63/0 0/9223372036854775808]"},
	}
	for _, tc := range tests {
		if got := fmt.Sprint(transparency.FrontierIDs(tc.size)); got != tc.want {
			t.Errorf("FrontierIDs(%d) = %s, want %s", tc.size, got, tc.want)
		}
	}
}

// TestLoadTree rebuilds the tree at every size from the stored nodes and
// checks it has the same root and goes on as the original did.
func TestLoadTree(t *testing.T) {
	ctx := context.Background()
	leaves := testLeaves(100)
	tree, store := buildTree(t, leaves)
	for size := range uint64(len(leaves)) + 1 {
		loaded, err := transparency.LoadTree(ctx, store, size)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if want := naiveRoot(t, slices32(leaves[:size])); loaded.Root() != want {
			t.Fatalf("size %d: loaded root %x, want %x", size, loaded.Root(), want)
		}
		for _, l := range leaves[size:] {
			if _, err := loaded.Append(l); err != nil {
				t.Fatal(err)
			}
		}
		if loaded.Root() != tree.Root() {
			t.Fatalf("loaded at %d and appended the rest: root %x, want %x", size, loaded.Root(), tree.Root())
		}
	}
	if _, err := transparency.LoadTree(ctx, store, 101); !errors.Is(err, transparency.ErrNodeNotFound) {
		t.Fatalf("loading past the stored tree: err = %v, want ErrNodeNotFound", err)
	}
	if _, err := transparency.NewTreeFromFrontier(7, make([]transparency.Hash, 2)); err == nil {
		t.Fatal("a tree of 7 leaves from 2 frontier hashes: no error")
	}
}

func TestAppendFullTree(t *testing.T) {
	tree, err := transparency.NewTreeFromFrontier(1<<64-1, make([]transparency.Hash, 64))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.Append(transparency.Hash{}); !errors.Is(err, transparency.ErrTreeFull) {
		t.Fatalf("append to a full tree: err = %v, want ErrTreeFull", err)
	}
}

func TestMemStorePut(t *testing.T) {
	ctx := context.Background()
	h := func(b byte) transparency.Hash { return transparency.Hash{b} }
	node := func(level uint8, index uint64, b byte) transparency.Node {
		return transparency.Node{NodeID: transparency.NodeID{Level: level, Index: index}, Hash: h(b)}
	}
	s := transparency.NewMemStore()
	if err := s.Put([]transparency.Node{node(0, 0, 1), node(0, 1, 2), node(1, 0, 3)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put([]transparency.Node{node(0, 1, 2), node(1, 0, 3)}); err != nil {
		t.Fatalf("storing the same nodes again: %v", err)
	}
	tests := []struct {
		name  string
		nodes []transparency.Node
		want  error
	}{
		{"other hash for a stored node", []transparency.Node{node(0, 1, 9)}, transparency.ErrNodeConflict},
		{"two hashes for a new node in one call", []transparency.Node{node(0, 2, 4), node(0, 2, 5)}, transparency.ErrNodeConflict},
		{"gap", []transparency.Node{node(0, 3, 4)}, nil},
		{"gap on a new level", []transparency.Node{node(5, 1, 4)}, nil},
		{"good node then a gap", []transparency.Node{node(0, 2, 4), node(0, 4, 5)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Put(tc.nodes)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("err = %v, want an error (%v)", err, tc.want)
			}
			// Nothing of a refused call is stored.
			if _, err := s.ReadNodes(ctx, []transparency.NodeID{{Level: 0, Index: 2}}); !errors.Is(err, transparency.ErrNodeNotFound) {
				t.Fatalf("node 0/2 after a refused call: err = %v", err)
			}
		})
	}
	got, err := s.ReadNodes(ctx, []transparency.NodeID{{Level: 1, Index: 0}, {Level: 0, Index: 0}})
	if err != nil || got[0] != h(3) || got[1] != h(1) {
		t.Fatalf("ReadNodes = %x, %v", got, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.ReadNodes(cancelled, []transparency.NodeID{{Level: 0, Index: 0}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadNodes with a cancelled context: err = %v", err)
	}
}

// TestMemStoreConcurrent appends while readers build proofs for the sizes
// already stored, as a log serving proofs during appends does; run it with
// -race.
func TestMemStoreConcurrent(t *testing.T) {
	ctx := context.Background()
	leaves := testLeaves(2000)
	tree, store := transparency.NewTree(), transparency.NewMemStore()
	var stored atomic.Uint64
	var stop atomic.Bool // set when the test ends, so no reader outlives it
	defer stop.Store(true)
	done := make(chan error, 2)
	for range 2 {
		go func() {
			for i := uint64(0); stored.Load() < uint64(len(leaves)) && !stop.Load(); i++ {
				size := stored.Load()
				if size == 0 {
					continue
				}
				proof, err := transparency.InclusionProof(ctx, store, i%size, size)
				if err != nil {
					done <- err
					return
				}
				root, err := transparency.RootAt(ctx, store, size)
				if err != nil {
					done <- err
					return
				}
				if err := verifier.VerifyInclusion(i%size, size, leaves[i%size][:], proof, root[:]); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for _, l := range leaves {
		nodes, err := tree.Append(l)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Put(nodes); err != nil {
			t.Fatal(err)
		}
		stored.Store(tree.Size())
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
