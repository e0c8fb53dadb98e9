package transparency

import (
	"context"
	"fmt"
	"slices"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// span is a range of leaves [lo, hi) whose Merkle hash is a proof element.
type span struct{ lo, hi uint64 }

// InclusionProof returns the RFC 9162 inclusion proof PATH(index, D[size])
// of leaf index in the tree of the first size leaves, nearest the leaf
// first, reading the nodes it needs from r (which must hold the tree of at
// least size leaves).
func InclusionProof(ctx context.Context, r NodeReader, index, size uint64) ([][]byte, error) {
	if index >= size {
		return nil, fmt.Errorf("inclusion proof: leaf %d is not in a tree of %d leaves", index, size)
	}
	proof, err := buildProof(ctx, r, inclusionSpans(index, size))
	if err != nil {
		return nil, fmt.Errorf("inclusion proof of leaf %d in %d: %w", index, size, err)
	}
	return proof, nil
}

// ConsistencyProof returns the RFC 9162 consistency proof
// PROOF(size1, D[size2]) that the tree of size2 leaves extends the tree of
// size1 leaves. It is empty for size1 0 or size1 equal to size2.
func ConsistencyProof(ctx context.Context, r NodeReader, size1, size2 uint64) ([][]byte, error) {
	if size1 > size2 {
		return nil, fmt.Errorf("consistency proof: size1 %d is above size2 %d", size1, size2)
	}
	if size1 == 0 || size1 == size2 {
		return [][]byte{}, nil
	}
	proof, err := buildProof(ctx, r, consistencySpans(size1, size2))
	if err != nil {
		return nil, fmt.Errorf("consistency proof from %d to %d: %w", size1, size2, err)
	}
	return proof, nil
}

// RootAt returns the root hash of the tree of the first size leaves.
func RootAt(ctx context.Context, r NodeReader, size uint64) (Hash, error) {
	if size == 0 {
		return verifier.EmptyRoot(), nil
	}
	hashes, err := readNodes(ctx, r, FrontierIDs(size))
	if err != nil {
		return Hash{}, fmt.Errorf("root of %d leaves: %w", size, err)
	}
	return fold(hashes), nil
}

// inclusionSpans follows the recursion of PATH(m, D[n]) from the top and
// returns the ranges of its elements nearest the leaf first.
func inclusionSpans(m, n uint64) []span {
	var out []span
	lo, hi := uint64(0), n
	for hi-lo > 1 {
		k := split(hi - lo)
		if m < lo+k {
			out = append(out, span{lo + k, hi})
			hi = lo + k
		} else {
			out = append(out, span{lo, lo + k})
			lo += k
		}
	}
	slices.Reverse(out)
	return out
}

// consistencySpans follows the recursion of SUBPROOF(m, D[n], true) from
// the top and returns the ranges of its elements in proof order.
func consistencySpans(m, n uint64) []span {
	var out []span
	lo, hi := uint64(0), n
	whole := true // the RFC's b: the subtree starts the old tree
	for {
		if m == hi-lo {
			if !whole {
				out = append(out, span{lo, hi})
			}
			break
		}
		k := split(hi - lo)
		if m <= k {
			out = append(out, span{lo + k, hi})
			hi = lo + k
		} else {
			out = append(out, span{lo, lo + k})
			lo += k
			m -= k
			whole = false
		}
	}
	slices.Reverse(out)
	return out
}

// buildProof reads the perfect nodes covering every span in one call and
// folds each span's nodes into its hash.
func buildProof(ctx context.Context, r NodeReader, spans []span) ([][]byte, error) {
	var ids []NodeID
	ends := make([]int, len(spans))
	for i, s := range spans {
		ids = append(ids, rangeIDs(s.lo, s.hi)...)
		ends[i] = len(ids)
	}
	hashes, err := readNodes(ctx, r, ids)
	if err != nil {
		return nil, err
	}
	proof := make([][]byte, len(spans))
	start := 0
	for i, end := range ends {
		h := fold(hashes[start:end])
		proof[i] = h[:]
		start = end
	}
	return proof, nil
}
