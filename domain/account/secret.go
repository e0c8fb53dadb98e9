package account

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// secretBytes is the entropy of a key: 256 bits.
const secretBytes = 32

// Secret is a freshly minted API key. Plain is shown to the caller once and
// must never be stored or logged; Hash is what is kept.
type Secret struct {
	Plain string
	Hash  string
	Hint  string
}

// NewSecret mints a random key for the service: its prefix followed by 43
// URL-safe base64 characters (256 random bits).
func NewSecret(s Service) (Secret, error) {
	if s.KeyPrefix() == "" {
		return Secret{}, fmt.Errorf("minting a key: unknown service %q", s)
	}
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return Secret{}, fmt.Errorf("minting a key: %w", err)
	}
	plain := s.KeyPrefix() + base64.RawURLEncoding.EncodeToString(b)
	return Secret{Plain: plain, Hash: HashSecret(plain), Hint: plain[len(plain)-4:]}, nil
}

// HashSecret is the stored form of a key: lowercase hex SHA-256 of the whole
// secret, prefix included.
func HashSecret(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// LooksLikeKey reports whether s has a known prefix and the right length; a
// cheap check before any lookup.
func LooksLikeKey(s string) (Service, bool) {
	for _, svc := range Services() {
		p := svc.KeyPrefix()
		if strings.HasPrefix(s, p) && len(s) == len(p)+base64.RawURLEncoding.EncodedLen(secretBytes) {
			return svc, true
		}
	}
	return "", false
}
