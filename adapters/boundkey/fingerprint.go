package boundkey

import (
	"crypto/sha256"
	"encoding/hex"
)

// Purpose names a key the database binds; it is the key's row in
// key_fingerprints.
type Purpose string

// The keys arr binds to its database.
const (
	// RecordsMasterKey wraps each account's records data key.
	RecordsMasterKey Purpose = "records_master_key"
	// LogSigningKey (Ed25519) signs the event log's tree heads.
	LogSigningKey Purpose = "log_signing_key"
	// AuditHMACKey keys the request and response hashes of audit entries.
	AuditHMACKey Purpose = "audit_hmac_key"
)

// fingerprintLabel separates arr's key fingerprints from every other use
// of SHA-256 over the same bytes.
const fingerprintLabel = "arr-key-fingerprint"

// SecretFingerprint is the fingerprint of a secret key:
// "sha256:" and the hex of SHA-256("arr-key-fingerprint" 0x00 purpose 0x00
// key). It does not reveal the key (a 256-bit random value), and the
// purpose in it keeps one key used for two purposes from showing as one.
func SecretFingerprint(p Purpose, key []byte) string {
	h := sha256.New()
	h.Write([]byte(fingerprintLabel))
	h.Write([]byte{0})
	h.Write([]byte(p))
	h.Write([]byte{0})
	h.Write(key)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
