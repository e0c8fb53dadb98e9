package secretkey

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Size is the length of every key in bytes.
const Size = 32

// Parse reads a key written as 64 hex digits or as base64 of 32 bytes.
// Its errors never contain the value.
func Parse(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == Size {
		return b, nil
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == Size {
		return b, nil
	}
	return nil, errors.New("a key must be 32 bytes, written as 64 hex digits or base64")
}

// New makes a random key and returns it with its text for a key file (64
// hex digits and a newline), which Parse reads back.
func New() (key []byte, text string, err error) {
	key = make([]byte, Size)
	if _, err := rand.Read(key); err != nil {
		return nil, "", fmt.Errorf("making a key: %w", err)
	}
	return key, hex.EncodeToString(key) + "\n", nil
}
