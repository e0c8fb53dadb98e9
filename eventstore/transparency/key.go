package transparency

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// pemType is the PEM block type of a PKCS #8 private key.
const pemType = "PRIVATE KEY"

// ParsePrivateKey reads an Ed25519 private key written either as PEM (a
// PKCS #8 "PRIVATE KEY" block, as `openssl genpkey -algorithm ed25519`
// writes it) or as standard base64 of the 32-byte seed or of the 64-byte
// seed-and-public-key form. Surrounding white space is ignored.
func ParsePrivateKey(s string) (ed25519.PrivateKey, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-----BEGIN") {
		return parsePEM([]byte(s))
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || strings.ContainsAny(s, "\r\n") {
		return nil, errors.New("parsing the log's signing key: neither PEM nor one line of standard base64")
	}
	switch len(b) {
	case ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(b), nil
	case ed25519.PrivateKeySize:
		priv := ed25519.NewKeyFromSeed(b[:ed25519.SeedSize])
		if !bytes.Equal(priv, b) {
			return nil, errors.New("parsing the log's signing key: its public half does not belong to its seed")
		}
		return priv, nil
	default:
		return nil, fmt.Errorf("parsing the log's signing key: %d bytes of base64, want a %d-byte seed or a %d-byte key", len(b), ed25519.SeedSize, ed25519.PrivateKeySize)
	}
}

func parsePEM(b []byte) (ed25519.PrivateKey, error) {
	block, rest := pem.Decode(b)
	if block == nil || block.Type != pemType {
		return nil, fmt.Errorf("parsing the log's signing key: no PEM %q block", pemType)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New("parsing the log's signing key: text after the PEM block")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing the log's signing key: %w", err)
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("parsing the log's signing key: a %T, not an Ed25519 key", key)
	}
	return priv, nil
}

// MarshalPrivateKey writes a key as a PKCS #8 PEM block.
func MarshalPrivateKey(priv ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("encoding the log's signing key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemType, Bytes: der}), nil
}

// LoadKeyFile reads the private key in the file at path (see
// ParsePrivateKey for the forms it takes).
func LoadKeyFile(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the log's signing key: %w", err)
	}
	priv, err := ParsePrivateKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return priv, nil
}

// GenerateKeyFile generates a private key and writes it as PEM to a new
// file at path that only its owner can read or write (mode 0600). It never
// replaces a file: one at path is an error wrapping fs.ErrExist. The file
// appears whole or not at all: the key is written to a temporary file in
// the same directory, which is then linked to path.
func GenerateKeyFile(path string) (ed25519.PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the log's signing key: %w", err)
	}
	pemBytes, err := MarshalPrivateKey(priv)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".signing-key-*")
	if err != nil {
		return nil, fmt.Errorf("creating the log's signing key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(0o600) // CreateTemp's mode already; be explicit
	if err == nil {
		_, err = tmp.Write(pemBytes)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	if err != nil {
		return nil, fmt.Errorf("writing the log's signing key to %s: %w", path, err)
	}
	return priv, nil
}

// LoadOrGenerateKeyFile loads the key at path, or generates one there if
// there is no file; generated says which.
func LoadOrGenerateKeyFile(path string) (priv ed25519.PrivateKey, generated bool, err error) {
	priv, err = GenerateKeyFile(path)
	if err == nil {
		return priv, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, false, err
	}
	priv, err = LoadKeyFile(path)
	return priv, false, err
}

// KeyFingerprint is the fingerprint of a log key, as arr records and
// prints it: "sha256:" and the hex of SHA-256 of the 32-byte Ed25519
// public key.
func KeyFingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "sha256:" + hex.EncodeToString(sum[:])
}
