package export

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
)

// WriteFile exports the events o selects from store to the file at path,
// atomically: they are written to a temporary file in path's directory
// (.BASE.tmp-*), which is synced to disk and then renamed over path, and
// the directory is synced. path holds what it held before until the
// rename and the whole export after it, never part of one, even if the
// process is killed or the machine stops mid-way. An export that fails or
// is canceled removes its temporary file; one killed outright (kill -9,
// a power cut) leaves it, never path.
//
// Replacing a file keeps its permissions; a new file gets 0666 less the
// umask, as os.Create gives. A symbolic link at path is followed: the
// file it names is replaced. A path that exists but is not a regular
// file (a device such as /dev/stdout, a named pipe) is written to
// directly, as a stream.
func WriteFile(ctx context.Context, store eventstore.Store, path string, o Options) (Result, error) {
	r, err := resolve(path)
	if err != nil {
		return Result{}, err
	}
	target, mode := r.target, r.mode
	if !r.regular {
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return Result{}, fmt.Errorf("export: opening %s: %w", path, err)
		}
		res, err := Write(ctx, store, f, o)
		return res, errors.Join(err, f.Close())
	}
	dir := filepath.Dir(target)
	tmp, err := createTemp(dir, filepath.Base(target))
	if err != nil {
		return Result{}, fmt.Errorf("export: creating a temporary file beside %s: %w", path, err)
	}
	committed := false
	defer func() {
		if !committed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if mode != 0 {
		if err := tmp.Chmod(mode); err != nil {
			return Result{}, fmt.Errorf("export: keeping the permissions of %s: %w", path, err)
		}
	}
	res, err := Write(ctx, store, tmp, o)
	if err != nil {
		return res, err
	}
	if err := tmp.Sync(); err != nil {
		return res, fmt.Errorf("export: syncing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return res, fmt.Errorf("export: closing %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return res, fmt.Errorf("export: renaming %s to %s: %w", tmp.Name(), path, err)
	}
	committed = true
	if err := syncDir(dir); err != nil {
		return res, fmt.Errorf("export: %s is complete, but syncing its directory failed, so a crash could still lose the rename: %w", path, err)
	}
	return res, nil
}

// resolved is the file an export replaces: its path (symbolic links
// followed), its permissions (0 when there is no file yet) and whether it
// is a regular file (or none).
type resolved struct {
	target  string
	mode    fs.FileMode
	regular bool
}

// resolve follows path to the file an export replaces.
func resolve(path string) (_ resolved, err error) {
	defer domain.Wrap(&err, "export")
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return resolved{target: path, regular: true}, nil
	}
	if err != nil {
		return resolved{}, err
	}
	if !fi.Mode().IsRegular() {
		return resolved{target: path}, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return resolved{}, err
	}
	return resolved{target: target, mode: fi.Mode().Perm(), regular: true}, nil
}

// createTemp creates a new file .base.tmp-RANDOM in dir. It is
// os.CreateTemp but for the mode: 0666 less the umask, as os.Create, not
// 0600, so that a new export is as readable as it was before exports
// became atomic.
func createTemp(dir, base string) (*os.File, error) {
	for range 100 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(b[:])), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("no unused temporary name in %s", dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}
