package transparency_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// TestProofVectors checks the prover against the published proofs of the
// eight-leaf tree.
func TestProofVectors(t *testing.T) {
	ctx := context.Background()
	var leaves []transparency.Hash
	for _, l := range vectorLeaves {
		leaves = append(leaves, verifier.LeafHash(unhex(t, l)))
	}
	_, store := buildTree(t, leaves)
	for _, v := range vectorInclusion {
		got, err := transparency.InclusionProof(ctx, store, v.index, v.size)
		if err != nil {
			t.Fatal(err)
		}
		if want := unhexProof(t, v.proof); !equalProofs(got, want) {
			t.Errorf("inclusion of %d in %d = %x, want %x", v.index, v.size, got, want)
		}
	}
	for _, v := range vectorConsistency {
		got, err := transparency.ConsistencyProof(ctx, store, v.size1, v.size2)
		if err != nil {
			t.Fatal(err)
		}
		if want := unhexProof(t, v.proof); !equalProofs(got, want) {
			t.Errorf("consistency of %d and %d = %x, want %x", v.size1, v.size2, got, want)
		}
	}
	for i, want := range vectorRoots {
		got, err := transparency.RootAt(ctx, store, uint64(i+1))
		if err != nil || fmt.Sprintf("%x", got) != want {
			t.Errorf("RootAt(%d) = %x, %v; want %s", i+1, got, err, want)
		}
	}
}

// TestProofsAgreeWithRFC builds one tree of up to 300 leaves and, for every
// size up to 64 and a random sample of sizes above, checks that the root
// equals the naive recursive MTH, and that inclusion and consistency
// proofs (all of them for small sizes, a sample for large) equal the RFC's
// PATH and PROOF and pass the standalone verifier.
func TestProofsAgreeWithRFC(t *testing.T) {
	ctx := context.Background()
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	const maxSize = 300
	leaves := testLeaves(maxSize)
	all := slices32(leaves)
	_, store := buildTree(t, leaves)

	sizes := make([]uint64, 0, 100)
	for s := uint64(1); s <= 64; s++ {
		sizes = append(sizes, s)
	}
	for range 30 {
		sizes = append(sizes, 65+rng.Uint64N(maxSize-64))
	}
	sizes = append(sizes, 128, 255, 256, 257, maxSize)
	for _, size := range sizes {
		root := naiveRoot(t, all[:size])
		got, err := transparency.RootAt(ctx, store, size)
		if err != nil || got != root {
			t.Fatalf("RootAt(%d) = %x, %v; want %x", size, got, err, root)
		}
		for _, index := range sample(rng, size, 64) {
			proof, err := transparency.InclusionProof(ctx, store, index, size)
			if err != nil {
				t.Fatal(err)
			}
			if want := naivePath(t, index, all[:size]); !equalProofs(proof, want) {
				t.Fatalf("inclusion of %d in %d: %x, RFC PATH %x", index, size, proof, want)
			}
			if err := verifier.VerifyInclusion(index, size, all[index], proof, root[:]); err != nil {
				t.Fatalf("inclusion of %d in %d: %v", index, size, err)
			}
		}
		for _, size1 := range sample(rng, size+1, 64) {
			proof, err := transparency.ConsistencyProof(ctx, store, size1, size)
			if err != nil {
				t.Fatal(err)
			}
			var want [][]byte
			if size1 > 0 && size1 < size {
				want = naiveSubproof(t, size1, all[:size], true)
			}
			if !equalProofs(proof, want) {
				t.Fatalf("consistency of %d and %d: %x, RFC PROOF %x", size1, size, proof, want)
			}
			root1 := naiveRoot(t, all[:size1])
			if err := verifier.VerifyConsistency(size1, size, root1[:], root[:], proof); err != nil {
				t.Fatalf("consistency of %d and %d: %v", size1, size, err)
			}
		}
	}
}

// sample returns every number below n if n <= k, else k distinct random
// ones including 0 and n-1.
func sample(rng *rand.Rand, n uint64, k int) []uint64 {
	if n <= uint64(k) {
		out := make([]uint64, n)
		for i := range out {
			out[i] = uint64(i)
		}
		return out
	}
	seen := map[uint64]bool{0: true, n - 1: true}
	for len(seen) < k {
		seen[rng.Uint64N(n)] = true
	}
	out := make([]uint64, 0, k)
	for v := range seen {
		out = append(out, v)
	}
	return out
}

func TestProofErrors(t *testing.T) {
	ctx := context.Background()
	_, store := buildTree(t, testLeaves(10))
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"inclusion of a leaf past the size", func() error {
			_, err := transparency.InclusionProof(ctx, store, 5, 5)
			return err
		}, nil},
		{"inclusion in a tree larger than stored", func() error {
			_, err := transparency.InclusionProof(ctx, store, 3, 11)
			return err
		}, transparency.ErrNodeNotFound},
		{"consistency backwards", func() error {
			_, err := transparency.ConsistencyProof(ctx, store, 6, 5)
			return err
		}, nil},
		{"consistency to a tree larger than stored", func() error {
			_, err := transparency.ConsistencyProof(ctx, store, 3, 12)
			return err
		}, transparency.ErrNodeNotFound},
		{"root of a tree larger than stored", func() error {
			_, err := transparency.RootAt(ctx, store, 11)
			return err
		}, transparency.ErrNodeNotFound},
		{"a reader that fails", func() error {
			_, err := transparency.InclusionProof(ctx, failingReader{err: context.DeadlineExceeded}, 3, 10)
			return err
		}, context.DeadlineExceeded},
		{"a reader that answers too few hashes", func() error {
			_, err := transparency.ConsistencyProof(ctx, failingReader{hashes: make([]transparency.Hash, 1)}, 3, 10)
			return err
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("err = %v, want an error (%v)", err, tc.want)
			}
		})
	}
	for _, sizes := range [][2]uint64{{0, 0}, {0, 10}, {10, 10}} {
		proof, err := transparency.ConsistencyProof(ctx, store, sizes[0], sizes[1])
		if err != nil || len(proof) != 0 {
			t.Errorf("consistency of %d and %d = %x, %v; want an empty proof", sizes[0], sizes[1], proof, err)
		}
	}
}
