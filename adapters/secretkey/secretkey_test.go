package secretkey_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/arr-dev/arr/adapters/secretkey"
)

func TestLoad(t *testing.T) {
	want := bytes.Repeat([]byte{0x5c}, secretkey.Size)
	dir := t.TempDir()
	cases := []struct {
		name, value string
		want        []byte
		err         string
	}{
		{"hex", hex.EncodeToString(want), want, ""},
		{"base64 with a newline", base64.StdEncoding.EncodeToString(want) + "\n", want, ""},
		{"too short", hex.EncodeToString(want[:16]), nil, "ARR_TEST_KEY: a key must be 32 bytes"},
		{"not a key", "secret-words", nil, "ARR_TEST_KEY: a key must be 32 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := secretkey.Load("ARR_TEST_KEY", tc.value, filepath.Join(dir, "unused.key"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), tc.value) {
					t.Fatalf("Load = %v, want %q without the value", err, tc.err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("Load = %x, %v", got, err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "unused.key")); !os.IsNotExist(err) {
		t.Fatalf("a configured key still made the file: %v", err)
	}
}

// TestFileIsMadeOnceAndShared: the first use creates the file (0600) and
// every later or concurrent use reads the same key.
func TestFileIsMadeOnceAndShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "audit-hmac.key")
	const n = 16
	keys := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); keys[i], errs[i] = secretkey.Load("ARR_TEST_KEY", "", path) }()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || len(keys[i]) != secretkey.Size || !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("use %d: %x, %v; want the same key as use 0 (%x)", i, keys[i], errs[i], keys[0])
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v, want 0600", err, fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left beside the key: %v", entries)
	}
	again, err := secretkey.File(path)
	if err != nil || !bytes.Equal(again, keys[0]) {
		t.Fatalf("reading again: %x, %v", again, err)
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := secretkey.File(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a damaged key file: %v, want an error naming it", err)
	}
}
