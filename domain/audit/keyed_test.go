package audit_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain/audit"
)

// TestHashKey: request and response hashes are HMAC-SHA-256 under the
// server's key, not the plain SHA-256 anyone could recompute from a
// guessed body; the key never shows in formatted output.
func TestHashKey(t *testing.T) {
	raw := bytes.Repeat([]byte{0xa7}, audit.HashKeySize)
	k, err := audit.NewHashKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"messages":[{"role":"user","content":"Say hello"}]}`)
	m := hmac.New(sha256.New, raw)
	m.Write(body)
	if got := k.Sum(body); got != hex.EncodeToString(m.Sum(nil)) {
		t.Fatalf("Sum = %s, want HMAC-SHA-256", got)
	}
	plain := sha256.Sum256(body)
	if k.Sum(body) == hex.EncodeToString(plain[:]) {
		t.Fatal("the keyed hash equals the plain SHA-256")
	}
	other, _ := audit.NewHashKey(bytes.Repeat([]byte{0x01}, audit.HashKeySize))
	if other.Sum(body) == k.Sum(body) {
		t.Fatal("two keys give the same hash")
	}
	// Streaming gives the same digest as Sum.
	h := k.New()
	h.Write(body[:10])
	h.Write(body[10:])
	if hex.EncodeToString(h.Sum(nil)) != k.Sum(body) {
		t.Fatal("New and Sum disagree")
	}
	// The key is copied: changing the caller's slice changes nothing.
	before := k.Sum(body)
	raw[0] ^= 0xff
	if k.Sum(body) != before {
		t.Fatal("the key aliases the caller's slice")
	}
	raw[0] ^= 0xff
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		if out := fmt.Sprintf(f, k); strings.Contains(out, "a7a7") || strings.Contains(out, string(raw)) {
			t.Fatalf("%s prints the key: %s", f, out)
		}
	}

	for _, n := range []int{0, 16, 31, 33, 64} {
		if _, err := audit.NewHashKey(make([]byte, n)); err == nil {
			t.Fatalf("a %d-byte key was accepted", n)
		}
	}
	if (audit.HashKey{}).Valid() || !k.Valid() {
		t.Fatal("Valid is wrong")
	}
}
