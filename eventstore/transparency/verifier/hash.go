package verifier

import (
	"crypto/sha256"
	"fmt"
	"math/bits"
)

// HashSize is the size in bytes of every hash in the tree (SHA-256).
const HashSize = sha256.Size

// EmptyRoot is the root hash of the empty tree: SHA-256 of no bytes.
func EmptyRoot() [HashSize]byte { return sha256.Sum256(nil) }

// LeafHash is the RFC 6962 hash of a leaf: SHA-256(0x00 || data).
func LeafHash(data []byte) [HashSize]byte {
	h := sha256.New()
	h.Write([]byte{0x00})
	h.Write(data)
	var out [HashSize]byte
	h.Sum(out[:0])
	return out
}

// NodeHash is the RFC 6962 hash of an interior node:
// SHA-256(0x01 || left || right).
func NodeHash(left, right []byte) [HashSize]byte {
	if len(left) == HashSize && len(right) == HashSize {
		// The common case, without an allocation.
		var buf [1 + 2*HashSize]byte
		buf[0] = 0x01
		copy(buf[1:], left)
		copy(buf[1+HashSize:], right)
		return sha256.Sum256(buf[:])
	}
	h := sha256.New()
	h.Write([]byte{0x01})
	h.Write(left)
	h.Write(right)
	var out [HashSize]byte
	h.Sum(out[:0])
	return out
}

// RootFromLeafHashes computes the Merkle tree hash MTH of leaves given by
// their leaf hashes, by the recursive definition of RFC 9162 section 2.1.1.
// It is the reference the incremental tree and the proofs are checked
// against; it takes O(n) time and O(log n) stack.
func RootFromLeafHashes(leafHashes [][]byte) ([HashSize]byte, error) {
	for i, h := range leafHashes {
		if len(h) != HashSize {
			return [HashSize]byte{}, fmt.Errorf("%w: leaf hash %d is %d bytes, want %d", ErrInvalid, i, len(h), HashSize)
		}
	}
	if len(leafHashes) == 0 {
		return EmptyRoot(), nil
	}
	return mth(leafHashes), nil
}

func mth(leaves [][]byte) [HashSize]byte {
	if len(leaves) == 1 {
		return [HashSize]byte(leaves[0])
	}
	k := largestPowerOfTwoBelow(uint64(len(leaves)))
	l, r := mth(leaves[:k]), mth(leaves[k:])
	return NodeHash(l[:], r[:])
}

// largestPowerOfTwoBelow returns the largest power of two smaller than n,
// for n >= 2.
func largestPowerOfTwoBelow(n uint64) uint64 {
	return 1 << (bits.Len64(n-1) - 1)
}
