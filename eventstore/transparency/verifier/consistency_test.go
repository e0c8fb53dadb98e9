package verifier_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

func TestVerifyConsistencyVectors(t *testing.T) {
	for _, v := range consistencyVectors {
		t.Run(fmt.Sprintf("%d to %d", v.size1, v.size2), func(t *testing.T) {
			r1, r2 := roots[v.size1-1], roots[v.size2-1]
			if err := verifier.VerifyConsistency(v.size1, v.size2, r1, r2, v.proof); err != nil {
				t.Fatalf("known good proof: %v", err)
			}
			for _, p := range corruptConsistency(v.size1, v.size2, r1, r2, v.proof) {
				if err := verifier.VerifyConsistency(p.size1, p.size2, p.root1, p.root2, p.proof); !errors.Is(err, verifier.ErrInvalid) {
					t.Errorf("%s: err = %v, want ErrInvalid", p.name, err)
				}
			}
		})
	}
}

// TestVerifyConsistencyEveryPair checks every pair of sizes of the
// eight-leaf tree against proofs built from the RFC's definition of PROOF,
// and that the vectors' proofs are among them.
func TestVerifyConsistencyEveryPair(t *testing.T) {
	hashes := leafHashes(leafData)
	for size2 := uint64(1); size2 <= uint64(len(hashes)); size2++ {
		for size1 := uint64(1); size1 <= size2; size1++ {
			proof := rfcProof(size1, hashes[:size2])
			r1, r2 := roots[size1-1], roots[size2-1]
			if err := verifier.VerifyConsistency(size1, size2, r1, r2, proof); err != nil {
				t.Errorf("%d to %d: %v", size1, size2, err)
			}
			for _, p := range corruptConsistency(size1, size2, r1, r2, proof) {
				if err := verifier.VerifyConsistency(p.size1, p.size2, p.root1, p.root2, p.proof); err == nil {
					t.Errorf("%d to %d, %s: verified", size1, size2, p.name)
				}
			}
		}
	}
	for _, v := range consistencyVectors {
		if got := rfcProof(v.size1, hashes[:v.size2]); !equalProofs(got, v.proof) {
			t.Errorf("PROOF(%d, D[%d]) = %x, vector %x", v.size1, v.size2, got, v.proof)
		}
	}
}

func TestVerifyConsistencyEdges(t *testing.T) {
	r1, r8 := roots[0], roots[7]
	tests := []struct {
		name         string
		size1, size2 uint64
		root1, root2 []byte
		proof        [][]byte
		ok           bool
	}{
		{"empty to empty", 0, 0, emptyTreeHash, emptyTreeHash, nil, true},
		{"empty to 8", 0, 8, emptyTreeHash, r8, nil, true},
		{"empty to 8 with a proof", 0, 8, emptyTreeHash, r8, [][]byte{emptyTreeHash}, false},
		{"empty with another root", 0, 8, someHash, r8, nil, false},
		{"same size same root", 8, 8, r8, r8, nil, true},
		{"same size other root", 8, 8, r8, r1, nil, false},
		{"same size with a proof", 8, 8, r8, r8, [][]byte{r8}, false},
		{"shrinking", 8, 1, r8, r1, nil, false},
		{"shrinking with a proof", 2, 1, roots[1], r1, [][]byte{r1}, false},
		{"growing with no proof", 1, 8, r1, r8, nil, false},
		{"short root1", 1, 8, r1[:31], r8, consistencyVectors[1].proof, false},
		{"short root2", 1, 8, r1, r8[:31], consistencyVectors[1].proof, false},
		{"huge sizes", 1<<63 + 1, ^uint64(0), r1, r8, consistencyVectors[1].proof, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := verifier.VerifyConsistency(tc.size1, tc.size2, tc.root1, tc.root2, tc.proof)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, verifier.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

type consistencyProbe struct {
	name         string
	size1, size2 uint64
	root1, root2 []byte
	proof        [][]byte
}

// corruptConsistency lists changes to a good consistency proof that must
// each fail. For equal sizes only root changes apply.
func corruptConsistency(size1, size2 uint64, root1, root2 []byte, proof [][]byte) []consistencyProbe {
	ps := []consistencyProbe{
		{"altered root1", size1, size2, flipBit(root1, 3, 0x40), root2, proof},
		{"altered root2", size1, size2, root1, flipBit(root2, 31, 1), proof},
		{"short root1", size1, size2, []byte("WrongRoot"), root2, proof},
		{"trailing root1", size1, size2, root1, root2, appendHashes(proof, root1)},
		{"trailing root2", size1, size2, root1, root2, appendHashes(proof, root2)},
		{"trailing empty hash", size1, size2, root1, root2, appendHashes(proof, []byte{})},
		{"leading root2", size1, size2, root1, root2, prependHashes(proof, root2)},
		{"leading empty hash", size1, size2, root1, root2, prependHashes(proof, []byte{})},
	}
	if size1 == size2 {
		return ps
	}
	ps = append(ps,
		consistencyProbe{"size1 - 1", size1 - 1, size2, root1, root2, proof},
		consistencyProbe{"size1 + 1", size1 + 1, size2, root1, root2, proof},
		consistencyProbe{"size1 ^ 2", size1 ^ 2, size2, root1, root2, proof},
		consistencyProbe{"size2 * 2", size1, size2 * 2, root1, root2, proof},
		consistencyProbe{"size2 / 2", size1, size2 / 2, root1, root2, proof},
		consistencyProbe{"swapped roots", size1, size2, root2, root1, proof},
		consistencyProbe{"empty proof", size1, size2, root1, root2, nil},
		consistencyProbe{"truncated", size1, size2, root1, root2, proof[:len(proof)-1]},
		consistencyProbe{"first hash dropped", size1, size2, root1, root2, proof[1:]},
		consistencyProbe{"leading root1", size1, size2, root1, root2, prependHashes(proof, root1)},
		consistencyProbe{"leading proof[0]", size1, size2, root1, root2, prependHashes(proof, proof[0])},
	)
	for i := range proof {
		ps = append(ps, consistencyProbe{fmt.Sprintf("proof[%d] bit flipped", i), size1, size2, root1, root2, alter(proof, i)})
	}
	for i := 1; i < len(proof); i++ {
		if swapped := swap(proof, i-1, i); !equalProofs(swapped, proof) {
			ps = append(ps, consistencyProbe{fmt.Sprintf("proof[%d] and proof[%d] swapped", i-1, i), size1, size2, root1, root2, swapped})
		}
	}
	return ps
}
