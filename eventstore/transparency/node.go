package transparency

import (
	"fmt"
	"math/bits"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// Hash is a SHA-256 hash of the tree: a leaf hash, a node hash or a root.
type Hash = [verifier.HashSize]byte

// NodeID names the root of a perfect subtree: Level 0 is a leaf, Level h
// covers 2^h leaves, from leaf Index*2^h on.
type NodeID struct {
	Level uint8
	Index uint64
}

// String writes the id as level/index.
func (id NodeID) String() string { return fmt.Sprintf("%d/%d", id.Level, id.Index) }

// Node is a node and its hash, as a store keeps it.
type Node struct {
	NodeID
	Hash Hash
}

// CompletedBy lists the nodes appending leaf leafIndex completes, from the
// leaf up: the leaf, then one node for each trailing one bit of leafIndex.
func CompletedBy(leafIndex uint64) []NodeID {
	ids := make([]NodeID, 0, 1+bits.TrailingZeros64(^leafIndex))
	ids = append(ids, NodeID{Level: 0, Index: leafIndex})
	for level, i := uint8(1), leafIndex; i&1 == 1; level++ {
		i >>= 1
		ids = append(ids, NodeID{Level: level, Index: i})
	}
	return ids
}

// FrontierIDs lists the perfect subtrees a tree of size leaves is made of,
// largest (leftmost) first: one for each bit set in size.
func FrontierIDs(size uint64) []NodeID {
	return rangeIDs(0, size)
}

// rangeIDs lists the perfect subtrees covering leaves [lo, hi), largest
// first, for a range whose lo is a multiple of a power of two at least
// hi-lo: the ranges an RFC 6962 tree splits into. The range's Merkle hash
// is then the right-to-left fold of their hashes.
func rangeIDs(lo, hi uint64) []NodeID {
	n := hi - lo
	ids := make([]NodeID, 0, bits.OnesCount64(n))
	for level := 63; level >= 0; level-- {
		if n&(1<<level) == 0 {
			continue
		}
		ids = append(ids, NodeID{Level: uint8(level), Index: lo >> level})
		lo += 1 << level
	}
	return ids
}

// fold is the Merkle hash of consecutive perfect subtrees, largest first:
// each hash becomes the left child of the fold of those after it.
func fold(hashes []Hash) Hash {
	r := hashes[len(hashes)-1]
	for i := len(hashes) - 2; i >= 0; i-- {
		r = verifier.NodeHash(hashes[i][:], r[:])
	}
	return r
}

// split is the size of the left subtree of a tree of n >= 2 leaves: the
// largest power of two below n.
func split(n uint64) uint64 { return 1 << (bits.Len64(n-1) - 1) }
