package verifier_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

func TestVerifyInclusionVectors(t *testing.T) {
	for _, v := range inclusionVectors {
		t.Run(fmt.Sprintf("leaf %d of %d", v.index, v.size), func(t *testing.T) {
			leaf := verifier.LeafHash(leafData[v.index])
			root := roots[v.size-1]
			if err := verifier.VerifyInclusion(v.index, v.size, leaf[:], v.proof, root); err != nil {
				t.Fatalf("known good proof: %v", err)
			}
			for _, p := range corruptInclusion(v.index, v.size, leaf[:], v.proof, root) {
				if err := verifier.VerifyInclusion(p.index, p.size, p.leaf, p.proof, p.root); !errors.Is(err, verifier.ErrInvalid) {
					t.Errorf("%s: err = %v, want ErrInvalid", p.name, err)
				}
			}
		})
	}
}

// TestVerifyInclusionEveryLeaf checks every leaf of every prefix of the
// eight-leaf tree against proofs built from the RFC's definition of PATH
// over the vectors' leaves, and that the proofs of the vectors are among
// them.
func TestVerifyInclusionEveryLeaf(t *testing.T) {
	hashes := leafHashes(leafData)
	for size := uint64(1); size <= uint64(len(hashes)); size++ {
		for index := range size {
			proof := rfcPath(index, hashes[:size])
			leaf := hashes[index]
			if err := verifier.VerifyInclusion(index, size, leaf, proof, roots[size-1]); err != nil {
				t.Errorf("leaf %d of %d: %v", index, size, err)
			}
			for _, p := range corruptInclusion(index, size, leaf, proof, roots[size-1]) {
				if err := verifier.VerifyInclusion(p.index, p.size, p.leaf, p.proof, p.root); err == nil {
					t.Errorf("leaf %d of %d, %s: verified", index, size, p.name)
				}
			}
		}
	}
	for _, v := range inclusionVectors {
		if got := rfcPath(v.index, hashes[:v.size]); !equalProofs(got, v.proof) {
			t.Errorf("PATH(%d, D[%d]) = %x, vector %x", v.index, v.size, got, v.proof)
		}
	}
}

func TestVerifyInclusionSingleLeaf(t *testing.T) {
	h := verifier.LeafHash([]byte("data"))
	tests := []struct {
		name       string
		root, leaf []byte
		ok         bool
	}{
		{"root is the leaf hash", h[:], h[:], true},
		{"empty leaf hash", h[:], nil, false},
		{"empty root", nil, h[:], false},
		{"both empty", nil, nil, false},
		{"empty tree root", emptyTreeHash, h[:], false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := verifier.VerifyInclusion(0, 1, tc.leaf, nil, tc.root)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestVerifyInclusionBounds(t *testing.T) {
	tests := []struct {
		name        string
		index, size uint64
	}{
		{"empty tree", 0, 0},
		{"index past the end", 1, 1},
		{"index far past the end", 5, 2},
		{"largest index of no tree", ^uint64(0), ^uint64(0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := verifier.VerifyInclusion(tc.index, tc.size, someHash, nil, someHash)
			if !errors.Is(err, verifier.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

type inclusionProbe struct {
	name        string
	index, size uint64
	leaf        []byte
	proof       [][]byte
	root        []byte
}

// corruptInclusion lists changes to a good inclusion proof that must each
// fail: a wrong index or size, a wrong leaf or root, a hash added, removed,
// altered or two swapped.
func corruptInclusion(index, size uint64, leaf []byte, proof [][]byte, root []byte) []inclusionProbe {
	ps := []inclusionProbe{
		{"index + 1", index + 1, size, leaf, proof, root},
		{"index ^ 2", index ^ 2, size, leaf, proof, root},
		{"size * 2", index, size * 2, leaf, proof, root},
		{"size / 2", index, size / 2, leaf, proof, root},
		{"wrong leaf", index, size, someHash, proof, root},
		{"short leaf", index, size, []byte("WrongLeaf"), proof, root},
		{"empty tree root", index, size, leaf, proof, emptyTreeHash},
		{"other root", index, size, leaf, proof, someHash},
		{"altered root", index, size, leaf, proof, flipBit(root, 0, 1)},
		{"trailing empty hash", index, size, leaf, appendHashes(proof, []byte{}), root},
		{"trailing root", index, size, leaf, appendHashes(proof, root), root},
		{"leading empty hash", index, size, leaf, prependHashes(proof, []byte{}), root},
		{"leading root", index, size, leaf, prependHashes(proof, root), root},
	}
	if index > 0 {
		ps = append(ps, inclusionProbe{"index - 1", index - 1, size, leaf, proof, root})
	}
	if len(proof) > 0 {
		ps = append(ps, inclusionProbe{"truncated", index, size, leaf, proof[:len(proof)-1], root})
		ps = append(ps, inclusionProbe{"first hash dropped", index, size, leaf, proof[1:], root})
	}
	for i := range proof {
		ps = append(ps, inclusionProbe{fmt.Sprintf("proof[%d] bit flipped", i), index, size, leaf, alter(proof, i), root})
	}
	for i := 1; i < len(proof); i++ {
		if swapped := swap(proof, i-1, i); !equalProofs(swapped, proof) {
			ps = append(ps, inclusionProbe{fmt.Sprintf("proof[%d] and proof[%d] swapped", i-1, i), index, size, leaf, swapped, root})
		}
	}
	if len(proof) > 1 {
		ps = append(ps, inclusionProbe{"hash inserted", index, size, leaf, append([][]byte{proof[0], someHash}, proof[1:]...), root})
	}
	return ps
}
