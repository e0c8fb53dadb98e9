package verifier_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// chunks splits b into 32-byte proof hashes; a shorter tail is kept, so
// the verifier also sees malformed hashes.
func chunks(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := min(len(b), verifier.HashSize)
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

func FuzzVerifyInclusion(f *testing.F) {
	for _, v := range inclusionVectors {
		leaf := verifier.LeafHash(leafData[v.index])
		f.Add(v.index, v.size, leaf[:], bytes.Join(v.proof, nil), roots[v.size-1])
	}
	f.Add(uint64(0), ^uint64(0), someHash, bytes.Repeat(someHash, 64), someHash)
	f.Fuzz(func(t *testing.T, index, size uint64, leaf, proof, root []byte) {
		err := verifier.VerifyInclusion(index, size, leaf, chunks(proof), root)
		if err != nil && !errors.Is(err, verifier.ErrInvalid) {
			t.Fatalf("error %v does not wrap ErrInvalid", err)
		}
		if err == nil {
			got, err := verifier.RootFromInclusionProof(index, size, leaf, chunks(proof))
			if err != nil || !bytes.Equal(got[:], root) {
				t.Fatalf("verified, but the proof leads to %x, %v", got, err)
			}
		}
	})
}

func FuzzVerifyConsistency(f *testing.F) {
	for _, v := range consistencyVectors {
		f.Add(v.size1, v.size2, roots[v.size1-1], roots[v.size2-1], bytes.Join(v.proof, nil))
	}
	f.Add(uint64(1)<<63, ^uint64(0), someHash, someHash, bytes.Repeat(someHash, 64))
	f.Fuzz(func(t *testing.T, size1, size2 uint64, root1, root2, proof []byte) {
		err := verifier.VerifyConsistency(size1, size2, root1, root2, chunks(proof))
		if err != nil && !errors.Is(err, verifier.ErrInvalid) {
			t.Fatalf("error %v does not wrap ErrInvalid", err)
		}
		if err == nil && size1 > size2 {
			t.Fatalf("verified a log shrinking from %d to %d", size1, size2)
		}
	})
}

func FuzzParseHead(f *testing.F) {
	f.Add([]byte(testHeadText))
	f.Add([]byte("o\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\ntimestamp-ms 0\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		h, err := verifier.ParseHead(text)
		if err != nil {
			if !errors.Is(err, verifier.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		back, err := h.Text()
		if err != nil || !bytes.Equal(back, text) {
			t.Fatalf("parsed %+v from %q, which encodes as %q, %v", h, text, back, err)
		}
	})
}

func FuzzOpenCheckpoint(f *testing.F) {
	priv := testKey()
	pub := priv.Public().(ed25519.PublicKey)
	h := testHead()
	f.Add([]byte(signedCheckpoint(f, priv, h.Origin, h)))
	f.Add([]byte(noteText + "\n" + peterSig + enochSig))
	f.Fuzz(func(t *testing.T, msg []byte) {
		got, err := verifier.OpenCheckpoint(msg, h.Origin, pub)
		if err != nil {
			if !errors.Is(err, verifier.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		text, err := got.Text()
		if err != nil || !bytes.HasPrefix(msg, append(text, '\n')) {
			t.Fatalf("opened %+v from %q", got, msg)
		}
	})
}

func FuzzParseVerifierKey(f *testing.F) {
	f.Add(peterVKey)
	f.Add(enochVKey)
	f.Fuzz(func(t *testing.T, vkey string) {
		name, pub, err := verifier.ParseVerifierKey(vkey)
		if err != nil {
			if !errors.Is(err, verifier.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if back, err := verifier.VerifierKey(name, pub); err != nil || back != vkey {
			t.Fatalf("parsed %q as %q %x, which writes as %q, %v", vkey, name, []byte(pub), back, err)
		}
	})
}
