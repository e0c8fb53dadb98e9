package verifier_test

import (
	"bytes"
	"math/bits"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

func leafHashes(data [][]byte) [][]byte {
	out := make([][]byte, len(data))
	for i, d := range data {
		h := verifier.LeafHash(d)
		out[i] = h[:]
	}
	return out
}

// rfcPath is PATH(m, D[n]) of RFC 9162 section 2.1.3.1, written as the RFC
// defines it, as an independent reference for the verifier.
func rfcPath(m uint64, leaves [][]byte) [][]byte {
	n := uint64(len(leaves))
	if n == 1 {
		return nil
	}
	k := split(n)
	if m < k {
		r := root(leaves[k:])
		return append(rfcPath(m, leaves[:k]), r[:])
	}
	l := root(leaves[:k])
	return append(rfcPath(m-k, leaves[k:]), l[:])
}

// rfcProof is PROOF(m, D[n]) of RFC 9162 section 2.1.4.1.
func rfcProof(m uint64, leaves [][]byte) [][]byte {
	if m == 0 || m == uint64(len(leaves)) {
		return nil
	}
	return rfcSubproof(m, leaves, true)
}

func rfcSubproof(m uint64, leaves [][]byte, b bool) [][]byte {
	n := uint64(len(leaves))
	if m == n {
		if b {
			return nil
		}
		r := root(leaves)
		return [][]byte{r[:]}
	}
	k := split(n)
	if m <= k {
		r := root(leaves[k:])
		return append(rfcSubproof(m, leaves[:k], b), r[:])
	}
	l := root(leaves[:k])
	return append(rfcSubproof(m-k, leaves[k:], false), l[:])
}

func root(leaves [][]byte) [verifier.HashSize]byte {
	r, err := verifier.RootFromLeafHashes(leaves)
	if err != nil {
		panic(err)
	}
	return r
}

func split(n uint64) uint64 { return 1 << (bits.Len64(n-1) - 1) }

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

func flipBit(h []byte, i int, mask byte) []byte {
	out := bytes.Clone(h)
	out[i] ^= mask
	return out
}

// alter copies proof with one bit of proof[i] flipped.
func alter(proof [][]byte, i int) [][]byte {
	out := append([][]byte{}, proof...)
	out[i] = flipBit(proof[i], 0, 8)
	return out
}

func swap(proof [][]byte, i, j int) [][]byte {
	out := append([][]byte{}, proof...)
	out[i], out[j] = out[j], out[i]
	return out
}

func appendHashes(proof [][]byte, hs ...[]byte) [][]byte {
	return append(append([][]byte{}, proof...), hs...)
}

func prependHashes(proof [][]byte, hs ...[]byte) [][]byte {
	return append(append([][]byte{}, hs...), proof...)
}
