package boundkey

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// Key is a key with its fingerprint. Material is the secret: it is never
// logged, recorded or put into an error.
type Key struct {
	Material    []byte
	Fingerprint string
	// PublicKey is the base64 of the public key, for an Ed25519 key.
	PublicKey string
}

// Spec says where a process finds a key and how it reads and makes one.
type Spec struct {
	Purpose Purpose
	// Name is the key's name in messages, e.g. "records master key".
	Name string
	// Env is the variable that can hold the key, and Value its value
	// ("": unset; then File is used).
	Env, Value string
	// File is the key file used when Value is empty, and DirEnv the
	// setting it follows (ARR_DATA_DIR), named in messages with its
	// value Dir.
	File, DirEnv, Dir string
	// Parse reads a key from Value or from File's content.
	Parse func(text string) (Key, error)
	// Generate makes a new key and the content of its file.
	Generate func() (Key, []byte, error)
	// Check, if set, is asked before a key is recorded (one found while
	// the database records none, or one just made) whether the
	// database's data was made with another key (data keys wrapped by
	// another master key, heads signed by another signing key); its
	// error explains how, and Bind refuses.
	Check func(ctx context.Context, k Key) error
	// By names the process binding, for the record (e.g. "arr up on
	// host h, pid 1").
	By     string
	Logger *slog.Logger
}

// Bind returns the key of spec.Purpose that this process was given, once
// it has checked that it is the database's:
//
//   - the database records a fingerprint: the key in spec.Value, else in
//     spec.File, must have it. A key that differs, or none (no variable,
//     no file), is refused: no file is made;
//   - the database records none: the key found is recorded (adopted, as
//     an installation from before the binding has its key file already),
//     or, when there is none, a key is made, written to spec.File and
//     recorded. Either way spec.Check must agree first. If another
//     process recorded a key in between, this one's is compared with it.
//
// Refusals wrap ErrRefused (*RefusedError) and say what was found where,
// both fingerprints and how to fix it; other errors are the database's or
// the file system's.
func (b *Binder) Bind(ctx context.Context, spec Spec) (Key, error) {
	if spec.Logger == nil {
		spec.Logger = slog.New(slog.DiscardHandler)
	}
	rec, recorded, err := b.Recorded(ctx, spec.Purpose)
	if err != nil {
		return Key{}, err
	}
	k, found, err := spec.find()
	if err != nil {
		return Key{}, err
	}
	switch {
	case recorded && !found:
		return Key{}, spec.refuse("%s: this database's key has fingerprint %s (%s), and this process has none: %s. No key file was made. %s",
			spec.Name, rec.Fingerprint, recordedHow(rec), spec.lookedAt(), spec.fix(rec))
	case recorded && k.Fingerprint != rec.Fingerprint:
		return Key{}, spec.mismatch(k, rec)
	case recorded:
		return k, nil
	}
	made := !found
	if made {
		if k, err = spec.make(ctx); err != nil {
			return Key{}, err
		}
		if k.Fingerprint == "" { // another process wrote the file first
			return b.Bind(ctx, spec)
		}
	} else if err := spec.check(ctx, k); err != nil {
		return Key{}, err
	}
	got, err := b.record(ctx, Record{Purpose: spec.Purpose, Fingerprint: k.Fingerprint, PublicKey: k.PublicKey, CreatedBy: spec.By + ", from " + spec.source()})
	if err != nil {
		return Key{}, err
	}
	if got.Fingerprint != k.Fingerprint { // another process recorded its key first
		if made {
			_ = os.Remove(spec.File) // this one's: nothing used it
		}
		return Key{}, spec.mismatch(k, got)
	}
	if made {
		spec.Logger.Warn("made the "+spec.Name+" and recorded its fingerprint in the database: back the key file up; every process of this installation needs this key ("+spec.Env+" or "+spec.DirEnv+")",
			"file", abs(spec.File), "fingerprint", k.Fingerprint)
	} else {
		spec.Logger.Info("recorded the fingerprint of the "+spec.Name+" in the database: from now on every process must have this key",
			"from", spec.source(), "fingerprint", k.Fingerprint)
	}
	return k, nil
}

// find reads the key given to this process: spec.Value, else spec.File;
// found is false when there is neither.
func (s Spec) find() (k Key, found bool, err error) {
	if s.Value != "" {
		if k, err = s.Parse(s.Value); err != nil {
			return Key{}, false, s.refuse("%s: %v", s.Env, err)
		}
		return k, true, nil
	}
	b, err := os.ReadFile(s.File)
	if errors.Is(err, fs.ErrNotExist) {
		return Key{}, false, nil
	}
	if err != nil {
		return Key{}, false, s.refuse("%s: reading the key file %s: %v", s.Name, abs(s.File), err)
	}
	if k, err = s.Parse(string(b)); err != nil {
		return Key{}, false, s.refuse("%s: the key file %s: %v", s.Name, abs(s.File), err)
	}
	return k, true, nil
}

// make makes a key and writes its file, once Check agrees. A zero Key
// means another process wrote the file first.
func (s Spec) make(ctx context.Context) (Key, error) {
	k, content, err := s.Generate()
	if err != nil {
		return Key{}, fmt.Errorf("making the %s: %w", s.Name, err)
	}
	if err := s.check(ctx, k); err != nil {
		return Key{}, err
	}
	if err := writeNew(s.File, content); errors.Is(err, fs.ErrExist) {
		return Key{}, nil
	} else if err != nil {
		return Key{}, fmt.Errorf("writing the %s to %s: %w", s.Name, abs(s.File), err)
	}
	return k, nil
}

func (s Spec) check(ctx context.Context, k Key) error {
	if s.Check == nil {
		return nil
	}
	if err := s.Check(ctx, k); err != nil {
		if !errors.Is(err, ErrRefused) {
			return fmt.Errorf("checking the %s against the database: %w", s.Name, err)
		}
		return s.refuse("%s: the database records no fingerprint for it yet, and %s has fingerprint %s, but %v. Nothing was recorded. %s",
			s.Name, s.source(), k.Fingerprint, err, s.fixUnrecorded())
	}
	return nil
}

func (s Spec) mismatch(k Key, rec Record) error {
	return s.refuse("%s: %s has fingerprint %s, but this database's %s has fingerprint %s (%s); arr uses no other key. %s",
		s.Name, s.source(), k.Fingerprint, s.Name, rec.Fingerprint, recordedHow(rec), s.fix(rec))
}

func (s Spec) refuse(format string, args ...any) error {
	return &RefusedError{Purpose: s.Purpose, Message: fmt.Sprintf(format, args...)}
}

// source names where the key was (or would be) found.
func (s Spec) source() string {
	if s.Value != "" {
		return s.Env
	}
	return "the key file " + abs(s.File)
}

// lookedAt says where this process looked for a key, for a refusal.
func (s Spec) lookedAt() string {
	return fmt.Sprintf("%s is unset and there is no key file %s (%s)", s.Env, abs(s.File), s.dirHow())
}

// dirHow says how the key file's directory was chosen.
func (s Spec) dirHow() string {
	if filepath.IsAbs(s.Dir) {
		return s.DirEnv + "=" + s.Dir
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = "?"
	}
	return fmt.Sprintf("%s=%s, relative to the working directory %s", s.DirEnv, s.Dir, wd)
}

func (s Spec) fix(rec Record) string {
	return fmt.Sprintf("Give this process the database's key: set %s to the directory that holds its key file, or %s to the key with fingerprint %s",
		s.DirEnv, s.Env, rec.Fingerprint)
}

func (s Spec) fixUnrecorded() string {
	return fmt.Sprintf("Give this process the key the data was made with: set %s to the directory holding its key file (%s) or %s to the key",
		s.DirEnv, s.dirHow(), s.Env)
}

func recordedHow(r Record) string {
	return fmt.Sprintf("recorded %s by %s", r.CreatedAt.Format(time.RFC3339), r.CreatedBy)
}

func abs(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}
