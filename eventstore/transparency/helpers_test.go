package transparency_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math/bits"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// The classic RFC 6962 eight-leaf tree of Certificate Transparency, as in
// transparency-dev/merkle proof/verify_test.go (commit
// 02194e9afb6c1d95b5381350007963aa70fff472); the verifier's tests carry the
// same vectors. Leaf indexes here are 0-based (upstream's are 1-based).
var (
	vectorLeaves = []string{"", "00", "10", "2021", "3031", "40414243",
		"5051525354555657", "606162636465666768696a6b6c6d6e6f"}
	vectorRoots = []string{
		"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
		"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
		"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
		"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
		"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
		"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
		"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
		"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
	}
	vectorInclusion = []struct {
		index, size uint64
		proof       []string
	}{
		{0, 1, nil},
		{0, 8, []string{
			"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
			"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
			"6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
		{5, 8, []string{
			"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
			"ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
			"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
		{2, 3, []string{
			"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"}},
		{1, 5, []string{
			"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
			"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
			"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
	}
	vectorConsistency = []struct {
		size1, size2 uint64
		proof        []string
	}{
		{1, 1, nil},
		{1, 8, []string{
			"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
			"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
			"6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
		{6, 8, []string{
			"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
			"ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
			"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
		{2, 5, []string{
			"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
			"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
		{6, 7, []string{
			"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
			"b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
			"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
	}
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func unhexProof(t testing.TB, ss []string) [][]byte {
	t.Helper()
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = unhex(t, s)
	}
	return out
}

// testLeaves returns n distinct leaf hashes.
func testLeaves(n int) []transparency.Hash {
	out := make([]transparency.Hash, n)
	for i := range out {
		out[i] = verifier.LeafHash(fmt.Appendf(nil, "leaf %d", i))
	}
	return out
}

// buildTree appends leaves to a new tree and stores every node it
// completes in a new MemStore.
func buildTree(t testing.TB, leaves []transparency.Hash) (*transparency.Tree, *transparency.MemStore) {
	t.Helper()
	tree, store := transparency.NewTree(), transparency.NewMemStore()
	for _, l := range leaves {
		nodes, err := tree.Append(l)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Put(nodes); err != nil {
			t.Fatal(err)
		}
	}
	return tree, store
}

func slices32(hs []transparency.Hash) [][]byte {
	out := make([][]byte, len(hs))
	for i := range hs {
		out[i] = hs[i][:]
	}
	return out
}

// naiveRoot is MTH by the RFC's recursive definition.
func naiveRoot(t testing.TB, leaves [][]byte) transparency.Hash {
	t.Helper()
	r, err := verifier.RootFromLeafHashes(leaves)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// naivePath is PATH(m, D[n]) of RFC 9162 section 2.1.3.1, as written there.
func naivePath(t testing.TB, m uint64, leaves [][]byte) [][]byte {
	n := uint64(len(leaves))
	if n == 1 {
		return nil
	}
	k := uint64(1) << (bits.Len64(n-1) - 1)
	if m < k {
		r := naiveRoot(t, leaves[k:])
		return append(naivePath(t, m, leaves[:k]), r[:])
	}
	l := naiveRoot(t, leaves[:k])
	return append(naivePath(t, m-k, leaves[k:]), l[:])
}

// naiveSubproof is SUBPROOF(m, D[n], b) of RFC 9162 section 2.1.4.1.
func naiveSubproof(t testing.TB, m uint64, leaves [][]byte, b bool) [][]byte {
	n := uint64(len(leaves))
	if m == n {
		if b {
			return nil
		}
		r := naiveRoot(t, leaves)
		return [][]byte{r[:]}
	}
	k := uint64(1) << (bits.Len64(n-1) - 1)
	if m <= k {
		r := naiveRoot(t, leaves[k:])
		return append(naiveSubproof(t, m, leaves[:k], b), r[:])
	}
	l := naiveRoot(t, leaves[:k])
	return append(naiveSubproof(t, m-k, leaves[k:], false), l[:])
}

func equalProofs(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// failingReader is a NodeReader that answers wrongly.
type failingReader struct {
	hashes []transparency.Hash
	err    error
}

func (f failingReader) ReadNodes(context.Context, []transparency.NodeID) ([]transparency.Hash, error) {
	return f.hashes, f.err
}
