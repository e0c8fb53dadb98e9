package transparency

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// Tree is the compact range of a log: its size and the hashes of the
// perfect subtrees it is made of. It appends leaves and computes the root;
// the nodes it completes go to a store, which proofs read. A Tree is not
// safe for concurrent use.
type Tree struct {
	size     uint64
	frontier []Hash // FrontierIDs(size), largest first
}

// NewTree returns the empty tree.
func NewTree() *Tree { return &Tree{} }

// NewTreeFromFrontier rebuilds a tree of size leaves from the hashes of
// FrontierIDs(size), in that order.
func NewTreeFromFrontier(size uint64, frontier []Hash) (*Tree, error) {
	if want := bits.OnesCount64(size); len(frontier) != want {
		return nil, fmt.Errorf("rebuilding a tree of %d leaves: %d frontier hashes, want %d", size, len(frontier), want)
	}
	return &Tree{size: size, frontier: append(make([]Hash, 0, 64), frontier...)}, nil
}

// LoadTree rebuilds the tree of size leaves from the nodes r holds.
func LoadTree(ctx context.Context, r NodeReader, size uint64) (*Tree, error) {
	hashes, err := readNodes(ctx, r, FrontierIDs(size))
	if err != nil {
		return nil, fmt.Errorf("loading the tree of %d leaves: %w", size, err)
	}
	return NewTreeFromFrontier(size, hashes)
}

// ErrTreeFull is returned by Append on a tree of 2^64-1 leaves.
var ErrTreeFull = errors.New("transparency: the tree holds 2^64-1 leaves and takes no more")

// Size is the number of leaves appended.
func (t *Tree) Size() uint64 { return t.size }

// Append adds a leaf and returns the nodes it completed, the leaf first
// (CompletedBy(old size) with their hashes). A store must keep them before
// a head of the new size is signed.
func (t *Tree) Append(leafHash Hash) ([]Node, error) {
	if t.size == math.MaxUint64 {
		return nil, ErrTreeFull
	}
	idx := t.size
	nodes := make([]Node, 0, 1+bits.TrailingZeros64(^idx))
	h := leafHash
	nodes = append(nodes, Node{NodeID{0, idx}, h})
	for level := uint8(1); idx&1 == 1; level++ {
		left := t.frontier[len(t.frontier)-1]
		t.frontier = t.frontier[:len(t.frontier)-1]
		h = verifier.NodeHash(left[:], h[:])
		idx >>= 1
		nodes = append(nodes, Node{NodeID{level, idx}, h})
	}
	t.frontier = append(t.frontier, h)
	t.size++
	return nodes, nil
}

// Root is the tree's root hash: the empty tree's for size 0.
func (t *Tree) Root() Hash {
	if t.size == 0 {
		return verifier.EmptyRoot()
	}
	return fold(t.frontier)
}

// Frontier returns the nodes the tree is made of, largest first.
func (t *Tree) Frontier() []Node {
	ids := FrontierIDs(t.size)
	out := make([]Node, len(ids))
	for i, id := range ids {
		out[i] = Node{id, t.frontier[i]}
	}
	return out
}
