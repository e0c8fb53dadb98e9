package verifier_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// The signed-note vectors of Go's checksum database, from golang/mod
// sumdb/note/note_test.go (commit 02c991387e35f9e4c0a9b7ce137717055f8d716d):
// two keys, a text, and each key's signature of it.
const (
	peterVKey = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
	peterSKey = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
	enochVKey = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
	noteText  = "If you think cryptography is the answer to your problem,\n" +
		"then you don't know what your problem is.\n"
	peterSig = "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
	enochSig = "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n"
)

func TestVerifierKeyInterop(t *testing.T) {
	name, pub, err := verifier.ParseVerifierKey(peterVKey)
	if err != nil {
		t.Fatal(err)
	}
	if name != "PeterNeumann" || verifier.KeyID(name, pub) != 0xc74f20a3 {
		t.Fatalf("parsed %q with key id %08x", name, verifier.KeyID(name, pub))
	}
	back, err := verifier.VerifierKey(name, pub)
	if err != nil || back != peterVKey {
		t.Fatalf("VerifierKey = %q, %v; want %q", back, err, peterVKey)
	}
	// The private key of the same vectors derives the same public key.
	seed, err := base64.StdEncoding.DecodeString(strings.SplitN(peterSKey, "+", 5)[4])
	if err != nil {
		t.Fatal(err)
	}
	if derived := ed25519.NewKeyFromSeed(seed[1:]).Public().(ed25519.PublicKey); !derived.Equal(pub) {
		t.Fatalf("seed derives %x, verifier key holds %x", []byte(derived), []byte(pub))
	}
	sig := ed25519.Sign(ed25519.NewKeyFromSeed(seed[1:]), []byte(noteText))
	want, _ := base64.StdEncoding.DecodeString(strings.Fields(peterSig)[2])
	if string(want[4:]) != string(sig) {
		t.Fatalf("signature of the note text differs from the vector")
	}
}

func TestParseVerifierKeyRejects(t *testing.T) {
	bad := []string{
		"",
		"PeterNeumann",
		"PeterNeumann+c74f20a3",
		"PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",                // wrong key id
		"PeterNeumann+C74F20A3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",                // fine hex, but not how it is written
		"PeterNeumann+c74f20a3+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",                // unknown algorithm
		"PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==",        // wrong length
		"PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW+extra",          // four parts
		"Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",               // space in the name
		"PeterNeumann+0xc74f20+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",                // not 8 hex digits
		"PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq_LDE4izWy10TW",                // URL alphabet
		"PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW\n",              // trailing newline
		"PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10T=",                // truncated
		"PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW" + "\x00",       // NUL
		"\xffPeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",            // not UTF-8
		"Peter\tNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",              // control character
		strings.Repeat("x", 256) + "+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", // name too long
	}
	for _, k := range bad {
		if _, _, err := verifier.ParseVerifierKey(k); !errors.Is(err, verifier.ErrInvalid) {
			t.Errorf("ParseVerifierKey(%q) err = %v, want ErrInvalid", k, err)
		}
	}
}

func TestOpenNote(t *testing.T) {
	_, peter, err := verifier.ParseVerifierKey(peterVKey)
	if err != nil {
		t.Fatal(err)
	}
	_, enoch, err := verifier.ParseVerifierKey(enochVKey)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := peterSig[:60] + "ABCD" + peterSig[60:]
	tests := []struct {
		name string
		msg  string
		key  string
		pub  ed25519.PublicKey
		ok   bool
	}{
		{"peter's signature", noteText + "\n" + peterSig, "PeterNeumann", peter, true},
		{"enoch's signature is ignored beside peter's", noteText + "\n" + peterSig + enochSig, "PeterNeumann", peter, true},
		{"enoch's key", noteText + "\n" + peterSig + enochSig, "EnochRoot", enoch, true},
		{"only someone else's signature", noteText + "\n" + enochSig, "PeterNeumann", peter, false},
		{"right key under another name", noteText + "\n" + strings.Replace(peterSig, "PeterNeumann", "Carmen", 1), "Carmen", peter, false},
		{"corrupt signature", noteText + "\n" + corrupt, "PeterNeumann", peter, false},
		{"corrupt signature beside a good one", noteText + "\n" + peterSig + corrupt, "PeterNeumann", peter, false},
		{"altered text", strings.Replace(noteText, "problem", "Problem", 1) + "\n" + peterSig, "PeterNeumann", peter, false},
		{"no signatures", noteText + "\n", "PeterNeumann", peter, false},
		{"no blank line", noteText + peterSig, "PeterNeumann", peter, false},
		{"no final newline", noteText + "\n" + strings.TrimSuffix(peterSig, "\n"), "PeterNeumann", peter, false},
		{"control byte", "\x01" + noteText + "\n" + peterSig, "PeterNeumann", peter, false},
		{"not UTF-8", "\xff" + noteText + "\n" + peterSig, "PeterNeumann", peter, false},
		{"space in a signer's name", noteText + "\n— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n", "PeterNeumann", peter, false},
		{"line after the signatures", noteText + "\n" + peterSig + "Unexpected line.\n", "PeterNeumann", peter, false},
		{"hyphen instead of em dash", noteText + "\n" + strings.Replace(peterSig, "—", "-", 1), "PeterNeumann", peter, false},
		{"too many signatures", noteText + "\n" + strings.Repeat(peterSig, 101), "PeterNeumann", peter, false},
		{"short public key", noteText + "\n" + peterSig, "PeterNeumann", peter[:31], false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, err := verifier.OpenNote([]byte(tc.msg), tc.key, tc.pub)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, verifier.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if tc.ok && string(text) != noteText {
				t.Fatalf("text = %q, want %q", text, noteText)
			}
		})
	}
}

// A key whose base64 holds a plus sign (about one in three) parses: only
// the first two plus signs separate the parts.
func TestParseVerifierKeyWithPlusInKey(t *testing.T) {
	const vkey = "arr.example/log+dddc51d2+AQOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4"
	name, pub, err := verifier.ParseVerifierKey(vkey)
	if err != nil {
		t.Fatalf("ParseVerifierKey(%q): %v", vkey, err)
	}
	if name != "arr.example/log" || fmt.Sprintf("%x", []byte(pub)) != "03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8" {
		t.Fatalf("got %s %x", name, []byte(pub))
	}
}
