package secretkey

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// File reads the key in path, creating it (random, 64 hex digits, mode
// 0600, its directory 0700) when it does not exist. The file appears
// whole: it is written under a temporary name and linked into place, so a
// process that finds it never reads it half-written, and of two processes
// creating it at once one wins and both use its key.
func File(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		k, err := Parse(string(b))
		if err != nil {
			return nil, fmt.Errorf("key file %s: %w", path, err)
		}
		return k, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading key file: %w", err)
	}
	key := make([]byte, Size)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("creating key file %s: %w", path, err)
	}
	if err := create(path, hex.EncodeToString(key)+"\n"); errors.Is(err, os.ErrExist) {
		return File(path) // another process made it first
	} else if err != nil {
		return nil, fmt.Errorf("creating key file %s: %w", path, err)
	}
	return key, nil
}

// create writes content to a new file at path, failing with os.ErrExist
// if there is one.
func create(path, content string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Link(tmp.Name(), path)
}

// Load returns the key configured in the variable name (value, empty if
// unset), else the one in the file path, created on first use. Errors name
// the variable or the file, never the key.
func Load(name, value, path string) ([]byte, error) {
	if value == "" {
		return File(path)
	}
	k, err := Parse(value)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return k, nil
}
