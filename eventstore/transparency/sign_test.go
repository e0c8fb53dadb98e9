package transparency_test

import (
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// exampleKey is the fixed key of docs/transparency.md: its seed is the
// bytes 0 to 31.
func exampleKey() ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	return ed25519.NewKeyFromSeed(seed)
}

func exampleHead(t testing.TB) verifier.Head {
	return verifier.Head{
		Origin:    "arr.example/log",
		Size:      8,
		Root:      transparency.Hash(unhex(t, vectorRoots[7])),
		Timestamp: 1700000000123,
	}
}

func TestSignVerifies(t *testing.T) {
	priv := exampleKey()
	pub := priv.Public().(ed25519.PublicKey)
	head := exampleHead(t)
	sig, err := transparency.Sign(priv, head)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifier.VerifyHead(pub, head, sig); err != nil {
		t.Fatalf("VerifyHead: %v", err)
	}
	note, err := transparency.SignCheckpoint(priv, head)
	if err != nil {
		t.Fatal(err)
	}
	got, err := verifier.OpenCheckpoint(note, head.Origin, pub)
	if err != nil || got != head {
		t.Fatalf("OpenCheckpoint = %+v, %v; want %+v", got, err, head)
	}
	if !strings.HasSuffix(string(note), "\n") || strings.Count(string(note), "\n— arr.example/log ") != 1 {
		t.Fatalf("checkpoint %q has not one signature line by its origin", note)
	}
}

func TestSignRejects(t *testing.T) {
	priv := exampleKey()
	bad := exampleHead(t)
	bad.Origin = "has space"
	if _, err := transparency.Sign(priv, bad); !errors.Is(err, verifier.ErrInvalid) {
		t.Errorf("signing a head with a bad origin: err = %v", err)
	}
	if _, err := transparency.SignCheckpoint(priv, bad); !errors.Is(err, verifier.ErrInvalid) {
		t.Errorf("signing a checkpoint with a bad origin: err = %v", err)
	}
	if _, err := transparency.Sign(priv[:32], exampleHead(t)); err == nil {
		t.Error("signing with a 32-byte private key: no error")
	}
}
