package audit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
)

// HashKeySize is the length in bytes of the server secret that keys
// request_hash and response_hash.
const HashKeySize = 32

// KeyedHashRule says in words how request_hash and response_hash are made.
const KeyedHashRule = "request_hash and response_hash are hex(HMAC-SHA-256(server secret, bytes)) of the request body as received and of the reply " +
	"(a streamed reply: each upstream data line followed by a newline); the secret never leaves the server, so a guessed " +
	"prompt or reply cannot be confirmed against them. Entries with link 1 were recorded before this rule and hold plain SHA-256"

// HashKey keys the request and response hashes of audit payloads with
// HMAC-SHA-256, so that a hash cannot confirm a guessed prompt. The zero
// value is unusable; NewHashKey makes one. Safe for concurrent use.
type HashKey struct{ key []byte }

// NewHashKey returns a HashKey over a copy of key, which must be
// HashKeySize bytes.
func NewHashKey(key []byte) (HashKey, error) {
	if len(key) != HashKeySize {
		return HashKey{}, fmt.Errorf("the audit hash key is %d bytes, want %d", len(key), HashKeySize)
	}
	return HashKey{key: append([]byte(nil), key...)}, nil
}

// Valid reports whether k was made by NewHashKey.
func (k HashKey) Valid() bool { return len(k.key) == HashKeySize }

// Sum returns hex(HMAC-SHA-256(key, b)).
func (k HashKey) Sum(b []byte) string {
	h := k.New()
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// New returns an HMAC-SHA-256 under the key, for bodies hashed as they
// stream; hex-encode its Sum.
func (k HashKey) New() hash.Hash { return hmac.New(sha256.New, k.key) }

// String keeps the key out of logs and error messages.
func (HashKey) String() string { return "audit.HashKey(redacted)" }

// GoString keeps the key out of %#v.
func (HashKey) GoString() string { return "audit.HashKey(redacted)" }

// Derive returns a key of its own for another purpose than the audit
// hashes: HMAC-SHA-256(key, NUL "arr derive" NUL purpose). No request body
// (JSON, never starting with NUL) hashes to it, so a request_hash never
// shows a derived key.
func (k HashKey) Derive(purpose string) []byte {
	h := k.New()
	h.Write([]byte("\x00arr derive\x00" + purpose))
	return h.Sum(nil)
}
