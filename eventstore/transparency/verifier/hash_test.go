package verifier_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// TestHashes checks the hash functions against the RFC 6962 vectors of
// transparency-dev/merkle rfc6962/rfc6962_test.go (commit
// 78493b07ef9b552e3379abf9e23d4da26fbe797c).
func TestHashes(t *testing.T) {
	empty := verifier.EmptyRoot()
	emptyLeaf := verifier.LeafHash(nil)
	leaf := verifier.LeafHash([]byte("L123456"))
	node := verifier.NodeHash([]byte("N123"), []byte("N456"))
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"empty tree", empty[:], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"empty leaf", emptyLeaf[:], "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"},
		{"leaf L123456", leaf[:], "395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56"},
		{"node N123 N456", node[:], "aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !bytes.Equal(tc.got, dh(tc.want)) {
				t.Fatalf("got %x, want %s", tc.got, tc.want)
			}
		})
	}
}

func TestNodeHashFastPathMatchesGeneral(t *testing.T) {
	l, r := verifier.LeafHash([]byte("l")), verifier.LeafHash([]byte("r"))
	fast := verifier.NodeHash(l[:], r[:])
	// The same bytes split differently take the general path.
	joined := append(append([]byte{}, l[:]...), r[:]...)
	general := verifier.NodeHash(joined[:31], joined[31:])
	if fast != general {
		t.Fatalf("NodeHash fast path %x, general path %x", fast, general)
	}
}

func TestRootFromLeafHashes(t *testing.T) {
	var hashes [][]byte
	for i, d := range leafData {
		h := verifier.LeafHash(d)
		hashes = append(hashes, h[:])
		got, err := verifier.RootFromLeafHashes(hashes)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[:], roots[i]) {
			t.Errorf("root of %d leaves = %x, want %x", i+1, got, roots[i])
		}
	}
	got, err := verifier.RootFromLeafHashes(nil)
	if err != nil || !bytes.Equal(got[:], emptyTreeHash) {
		t.Errorf("root of no leaves = %x, %v; want %x", got, err, emptyTreeHash)
	}
	if _, err := verifier.RootFromLeafHashes([][]byte{hashes[0], []byte("short")}); !errors.Is(err, verifier.ErrInvalid) {
		t.Errorf("a 5-byte leaf hash: err = %v, want ErrInvalid", err)
	}
}
