package transparency_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arr-dev/arr/eventstore/transparency"
)

// The Ed25519 private key example of RFC 8410 section 10.3 and the public
// key of section 10.1 that belongs to it.
const (
	rfc8410PEM = "-----BEGIN PRIVATE KEY-----\n" +
		"MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n" +
		"-----END PRIVATE KEY-----\n"
	rfc8410Seed = "d4ee72dbf913584ad5b6d8f1f769f8ad3afe7c28cbf1d4fbe097a88f44755842"
	rfc8410Pub  = "19bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1"
)

func TestParsePrivateKey(t *testing.T) {
	seed := unhex(t, rfc8410Seed)
	want := ed25519.NewKeyFromSeed(seed)
	if pub := want.Public().(ed25519.PublicKey); string(pub) != string(unhex(t, rfc8410Pub)) {
		t.Fatalf("RFC 8410 seed derives public key %x", []byte(pub))
	}
	marshalled, err := transparency.MarshalPrivateKey(want)
	if err != nil {
		t.Fatal(err)
	}
	good := []struct {
		name, in string
	}{
		{"RFC 8410 PEM", rfc8410PEM},
		{"PEM with surrounding blank lines", "\n\n" + rfc8410PEM + "\n"},
		{"MarshalPrivateKey's PEM", string(marshalled)},
		{"base64 seed", base64.StdEncoding.EncodeToString(seed)},
		{"base64 seed and a newline", base64.StdEncoding.EncodeToString(seed) + "\n"},
		{"base64 seed and public key", base64.StdEncoding.EncodeToString(want)},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			got, err := transparency.ParsePrivateKey(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(want) {
				t.Fatalf("parsed another key")
			}
		})
	}

	mismatched := append(append([]byte{}, seed...), make([]byte, 32)...)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, err := x509.MarshalPKCS8PrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	ecPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}))
	bad := []struct {
		name, in string
	}{
		{"empty", ""},
		{"not base64", "not a key"},
		{"URL-safe base64", strings.NewReplacer("+", "-", "/", "_").Replace(base64.StdEncoding.EncodeToString(append([]byte{0xfb, 0xff}, seed[2:]...)))},
		{"base64 split over lines", base64.StdEncoding.EncodeToString(seed)[:20] + "\n" + base64.StdEncoding.EncodeToString(seed)[20:]},
		{"31 bytes", base64.StdEncoding.EncodeToString(seed[:31])},
		{"64 bytes whose public half is not the seed's", base64.StdEncoding.EncodeToString(mismatched)},
		{"public key PEM", "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n"},
		{"PEM with text after it", rfc8410PEM + "garbage\n"},
		{"broken PEM body", strings.Replace(rfc8410PEM, "MC4C", "MC5C", 1)},
		{"P-256 key", ecPEM},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := transparency.ParsePrivateKey(tc.in)
			if err == nil {
				t.Fatal("parsed")
			}
			t.Log(err)
		})
	}
}

func TestGenerateKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.key")
	priv, err := transparency.GenerateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", info.Mode().Perm())
	}
	loaded, err := transparency.LoadKeyFile(path)
	if err != nil || !loaded.Equal(priv) {
		t.Fatalf("LoadKeyFile = %v; the generated key back: %v", err, loaded.Equal(priv))
	}
	if _, err := transparency.GenerateKeyFile(path); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("generating over an existing file: err = %v, want fs.ErrExist", err)
	}
	if again, _ := transparency.LoadKeyFile(path); !again.Equal(priv) {
		t.Fatal("the refused second generation changed the file")
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil || len(entries) != 1 {
		t.Fatalf("directory holds %d entries (%v), want only the key", len(entries), err)
	}
	if _, err := transparency.GenerateKeyFile(filepath.Join(t.TempDir(), "missing", "log.key")); err == nil {
		t.Fatal("generating into a missing directory: no error")
	}
}

func TestLoadOrGenerateKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.key")
	first, generated, err := transparency.LoadOrGenerateKeyFile(path)
	if err != nil || !generated {
		t.Fatalf("first call: generated=%v, %v", generated, err)
	}
	second, generated, err := transparency.LoadOrGenerateKeyFile(path)
	if err != nil || generated || !second.Equal(first) {
		t.Fatalf("second call: generated=%v, same key %v, %v", generated, second.Equal(first), err)
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := transparency.LoadOrGenerateKeyFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a garbage key file: err = %v, want one naming %s", err, path)
	}
	if _, err := transparency.LoadKeyFile(filepath.Join(t.TempDir(), "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("loading a missing file: err = %v", err)
	}
}
