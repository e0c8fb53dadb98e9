package verifier

import (
	"crypto/subtle"
	"fmt"
	"math/bits"
)

// VerifyConsistency checks that the tree of size2 leaves with root root2
// extends the tree of size1 leaves with root root1: the first size1 leaves
// are the same, so nothing the log showed at size1 was changed or removed.
// proof is the RFC 9162 consistency proof PROOF(size1, D[size2]). It follows
// RFC 9162 section 2.1.4.2; from size 0 the proof is empty and root1 must
// be the empty tree's root, and from size n to n it is empty and the roots
// must be equal.
func VerifyConsistency(size1, size2 uint64, root1, root2 []byte, proof [][]byte) error {
	if len(root1) != HashSize || len(root2) != HashSize {
		return fmt.Errorf("%w: roots are %d and %d bytes, want %d", ErrInvalid, len(root1), len(root2), HashSize)
	}
	if err := checkProofHashes(proof); err != nil {
		return err
	}
	switch {
	case size2 < size1:
		return fmt.Errorf("%w: size2 %d is below size1 %d: a log never shrinks", ErrInvalid, size2, size1)
	case size1 == size2:
		if len(proof) != 0 {
			return fmt.Errorf("%w: a consistency proof between equal sizes is empty, got %d hashes", ErrInvalid, len(proof))
		}
		if !equal(root1, root2) {
			return fmt.Errorf("%w: two roots for size %d: %x and %x", ErrInvalid, size1, root1, root2)
		}
		return nil
	case size1 == 0:
		if len(proof) != 0 {
			return fmt.Errorf("%w: a consistency proof from size 0 is empty, got %d hashes", ErrInvalid, len(proof))
		}
		if empty := EmptyRoot(); !equal(root1, empty[:]) {
			return fmt.Errorf("%w: root1 %x is not the empty tree's root %x", ErrInvalid, root1, empty)
		}
		return nil
	case len(proof) == 0:
		return fmt.Errorf("%w: empty consistency proof from size %d to %d", ErrInvalid, size1, size2)
	}

	// Step 2: when size1 is a power of two, the old root is itself a node
	// of the new tree and starts the path.
	path := proof
	if size1&(size1-1) == 0 {
		path = make([][]byte, 0, len(proof)+1)
		path = append(path, root1)
		path = append(path, proof...)
	}
	// Steps 3 and 4.
	fn, sn := size1-1, size2-1
	tz := uint(bits.TrailingZeros64(^fn))
	fn >>= tz
	sn >>= tz
	// Steps 5 and 6.
	fr, sr := [HashSize]byte(path[0]), [HashSize]byte(path[0])
	for _, c := range path[1:] {
		if sn == 0 {
			return fmt.Errorf("%w: consistency proof from %d to %d has %d hashes, too many", ErrInvalid, size1, size2, len(proof))
		}
		if fn&1 == 1 || fn == sn {
			fr = NodeHash(c, fr[:])
			sr = NodeHash(c, sr[:])
			for fn&1 == 0 && fn != 0 {
				fn >>= 1
				sn >>= 1
			}
		} else {
			sr = NodeHash(sr[:], c)
		}
		fn >>= 1
		sn >>= 1
	}
	// Step 7.
	if sn != 0 {
		return fmt.Errorf("%w: consistency proof from %d to %d has %d hashes, too few", ErrInvalid, size1, size2, len(proof))
	}
	if !equal(fr[:], root1) {
		return fmt.Errorf("%w: consistency proof from %d to %d leads to old root %x, not %x", ErrInvalid, size1, size2, fr, root1)
	}
	if !equal(sr[:], root2) {
		return fmt.Errorf("%w: consistency proof from %d to %d leads to new root %x, not %x", ErrInvalid, size1, size2, sr, root2)
	}
	return nil
}

func equal(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }
