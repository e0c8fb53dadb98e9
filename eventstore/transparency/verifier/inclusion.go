package verifier

import (
	"crypto/subtle"
	"fmt"
)

// VerifyInclusion checks that leafHash is leaf leafIndex of the tree of
// treeSize leaves whose root is root, given the inclusion proof (the RFC
// 9162 audit path, nearest the leaf first).
func VerifyInclusion(leafIndex, treeSize uint64, leafHash []byte, proof [][]byte, root []byte) error {
	if len(root) != HashSize {
		return fmt.Errorf("%w: root is %d bytes, want %d", ErrInvalid, len(root), HashSize)
	}
	got, err := RootFromInclusionProof(leafIndex, treeSize, leafHash, proof)
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare(got[:], root) != 1 {
		return fmt.Errorf("%w: inclusion proof for leaf %d of %d leads to root %x, not %x", ErrInvalid, leafIndex, treeSize, got, root)
	}
	return nil
}

// RootFromInclusionProof computes the root that an inclusion proof of
// leafHash at leafIndex in a tree of treeSize leaves leads to (RFC 9162
// section 2.1.3.2, steps 1 to 4, and the check of sn in step 5). Compare it
// with a root the log signed; VerifyInclusion does both.
func RootFromInclusionProof(leafIndex, treeSize uint64, leafHash []byte, proof [][]byte) ([HashSize]byte, error) {
	var none, r [HashSize]byte
	if leafIndex >= treeSize {
		return none, fmt.Errorf("%w: leaf index %d is not below tree size %d", ErrInvalid, leafIndex, treeSize)
	}
	if len(leafHash) != HashSize {
		return none, fmt.Errorf("%w: leaf hash is %d bytes, want %d", ErrInvalid, len(leafHash), HashSize)
	}
	if err := checkProofHashes(proof); err != nil {
		return none, err
	}
	fn, sn := leafIndex, treeSize-1
	r = [HashSize]byte(leafHash)
	for _, p := range proof {
		if sn == 0 {
			return none, fmt.Errorf("%w: inclusion proof for leaf %d of %d has %d hashes, too many", ErrInvalid, leafIndex, treeSize, len(proof))
		}
		if fn&1 == 1 || fn == sn {
			r = NodeHash(p, r[:])
			for fn&1 == 0 && fn != 0 {
				fn >>= 1
				sn >>= 1
			}
		} else {
			r = NodeHash(r[:], p)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return none, fmt.Errorf("%w: inclusion proof for leaf %d of %d has %d hashes, too few", ErrInvalid, leafIndex, treeSize, len(proof))
	}
	return r, nil
}

func checkProofHashes(proof [][]byte) error {
	for i, p := range proof {
		if len(p) != HashSize {
			return fmt.Errorf("%w: proof hash %d is %d bytes, want %d", ErrInvalid, i, len(p), HashSize)
		}
	}
	return nil
}
