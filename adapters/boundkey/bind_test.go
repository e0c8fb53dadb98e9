package boundkey_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/arr-dev/arr/adapters/boundkey"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// spec is a 32-byte secret key's spec in dir, as cmd/arr builds it.
func spec(dir, value string) boundkey.Spec {
	p := boundkey.AuditHMACKey
	parse := func(text string) (boundkey.Key, error) {
		k, err := hex.DecodeString(strings.TrimSpace(text))
		if err != nil || len(k) != 32 {
			return boundkey.Key{}, errors.New("want 64 hex digits")
		}
		return boundkey.Key{Material: k, Fingerprint: boundkey.SecretFingerprint(p, k)}, nil
	}
	return boundkey.Spec{
		Purpose: p, Name: "test key", Env: "ARR_TEST_KEY", Value: value,
		File: filepath.Join(dir, "test.key"), DirEnv: "ARR_DATA_DIR", Dir: dir,
		Parse: parse,
		Generate: func() (boundkey.Key, []byte, error) {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			k, err := parse(hex.EncodeToString(b))
			return k, []byte(hex.EncodeToString(b) + "\n"), err
		},
		By: "test",
	}
}

func newBinder(t *testing.T) *boundkey.Binder {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	b, err := boundkey.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBindRaceOnAFreshDatabase: processes with their own data directories
// start at once on a fresh database; exactly one key is recorded, the
// process that made it keeps it, every other refuses and leaves no key
// file behind.
func TestBindRaceOnAFreshDatabase(t *testing.T) {
	b := newBinder(t)
	const n = 8
	dirs := make([]string, n)
	keys := make([]boundkey.Key, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		dirs[i] = t.TempDir()
		wg.Add(1)
		go func() { defer wg.Done(); keys[i], errs[i] = b.Bind(context.Background(), spec(dirs[i], "")) }()
	}
	wg.Wait()
	rec, ok, err := b.Recorded(context.Background(), boundkey.AuditHMACKey)
	if err != nil || !ok {
		t.Fatalf("Recorded: %v %v", ok, err)
	}
	won := 0
	for i := range n {
		_, statErr := os.Stat(filepath.Join(dirs[i], "test.key"))
		switch {
		case errs[i] == nil:
			won++
			if keys[i].Fingerprint != rec.Fingerprint || statErr != nil {
				t.Errorf("process %d: kept key %s (file: %v), the database records %s", i, keys[i].Fingerprint, statErr, rec.Fingerprint)
			}
		case errors.Is(errs[i], boundkey.ErrRefused):
			if !strings.Contains(errs[i].Error(), rec.Fingerprint) || !os.IsNotExist(statErr) {
				t.Errorf("process %d: refused with %v; key file left: %v", i, errs[i], statErr)
			}
		default:
			t.Errorf("process %d: %v", i, errs[i])
		}
	}
	if won != 1 {
		t.Fatalf("%d processes kept a key, want 1", won)
	}
}

// TestBindAdoptsCompareRefuses walks the cases of one key: an existing
// file is adopted (not replaced); the same key in the variable is
// accepted; another key, or none, is refused without a file being made;
// a Check that disagrees stops a key from being recorded.
func TestBindAdoptsCompareRefuses(t *testing.T) {
	ctx := context.Background()
	b := newBinder(t)
	dir := t.TempDir()
	existing := bytes.Repeat([]byte{0x11}, 32)
	if err := os.WriteFile(filepath.Join(dir, "test.key"), []byte(hex.EncodeToString(existing)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	disagree := spec(dir, "")
	disagree.Check = func(context.Context, boundkey.Key) error {
		return &boundkey.RefusedError{Message: "the data was made with key X"}
	}
	if _, err := b.Bind(ctx, disagree); !errors.Is(err, boundkey.ErrRefused) || !strings.Contains(err.Error(), "the data was made with key X") {
		t.Fatalf("Bind with a disagreeing Check: %v", err)
	}
	if _, ok, _ := b.Recorded(ctx, boundkey.AuditHMACKey); ok {
		t.Fatal("a key was recorded although Check disagreed")
	}
	k, err := b.Bind(ctx, spec(dir, ""))
	if err != nil || !bytes.Equal(k.Material, existing) {
		t.Fatalf("adopting the existing file: %x, %v", k.Material, err)
	}
	want := boundkey.SecretFingerprint(boundkey.AuditHMACKey, existing)
	if rec, ok, err := b.Recorded(ctx, boundkey.AuditHMACKey); !ok || err != nil || rec.Fingerprint != want || !strings.Contains(rec.CreatedBy, filepath.Join(dir, "test.key")) {
		t.Fatalf("record after adopting: %+v %v %v", rec, ok, err)
	}
	if _, err := b.Bind(ctx, spec(t.TempDir(), hex.EncodeToString(existing))); err != nil {
		t.Fatalf("the same key in the variable: %v", err)
	}
	other := hex.EncodeToString(bytes.Repeat([]byte{0x22}, 32))
	_, err = b.Bind(ctx, spec(t.TempDir(), other))
	if !errors.Is(err, boundkey.ErrRefused) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "ARR_TEST_KEY has fingerprint") || strings.Contains(err.Error(), other) {
		t.Fatalf("another key in the variable: %v", err)
	}
	empty := t.TempDir()
	_, err = b.Bind(ctx, spec(empty, ""))
	if !errors.Is(err, boundkey.ErrRefused) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), filepath.Join(empty, "test.key")) {
		t.Fatalf("no key where the database names one: %v", err)
	}
	if _, err := os.Stat(filepath.Join(empty, "test.key")); !os.IsNotExist(err) {
		t.Fatalf("a key file was made where the database names a key: %v", err)
	}
	if _, err := b.Bind(ctx, spec(t.TempDir(), "not hex")); !errors.Is(err, boundkey.ErrRefused) || strings.Contains(err.Error(), "not hex") {
		t.Fatalf("a malformed key: %v", err)
	}
}
