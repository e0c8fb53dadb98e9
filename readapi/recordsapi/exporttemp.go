package recordsapi

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// gpkgPattern names the GeoPackages' temporary files.
const gpkgPattern = "arr-export-*.gpkg"

// exportTemps are the temporary GeoPackages of this server's exports, in
// dir. Each is held, while its export runs, by an exclusive lock on the
// file (flock) that the kernel drops when the process ends however it
// ends (kill -9 included), so a sweep tells a file left by a dead process
// (none holds its lock) from one a live export is writing, in this
// process or in another sharing the directory, at once and without
// guessing from its age. Safe for concurrent use.
type exportTemps struct {
	dir  string
	mu   sync.Mutex
	held map[string]bool
}

func newExportTemps(dir string) *exportTemps {
	return &exportTemps{dir: dir, held: map[string]bool{}}
}

// exportTemp is one temporary GeoPackage, held until release.
type exportTemp struct {
	t    *exportTemps
	path string
	lock *os.File
}

// create makes a new temporary GeoPackage, held by this process.
func (t *exportTemps) create() (*exportTemp, error) {
	for range 3 {
		f, err := os.CreateTemp(t.dir, gpkgPattern)
		if err != nil {
			return nil, fmt.Errorf("a GeoPackage's temporary file: %w", err)
		}
		// Another process's sweep may have taken the file between its
		// creation and its lock, and removed it: then make another.
		if held, err := hold(f); err != nil || !held || !samePath(f) {
			_ = f.Close()
			if err != nil {
				return nil, fmt.Errorf("locking a GeoPackage's temporary file: %w", err)
			}
			continue
		}
		t.mu.Lock()
		t.held[f.Name()] = true
		t.mu.Unlock()
		return &exportTemp{t: t, path: f.Name(), lock: f}, nil
	}
	return nil, errors.New("a GeoPackage's temporary file was removed three times as it was made")
}

// samePath reports whether f's path still names f.
func samePath(f *os.File) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(f.Name())
	return err == nil && os.SameFile(a, b)
}

// release removes the file, then lets its lock go.
func (e *exportTemp) release() {
	_ = os.Remove(e.path)
	_ = e.lock.Close()
	e.t.mu.Lock()
	delete(e.t.held, e.path)
	e.t.mu.Unlock()
}

// sweep removes the temporary GeoPackages in dir that no live export
// holds: left by a process that died while it wrote one. The files this
// server holds are not touched (not even opened). It returns how many it
// removed.
func (t *exportTemps) sweep() int {
	paths, _ := filepath.Glob(filepath.Join(t.dir, gpkgPattern))
	removed := 0
	for _, p := range paths {
		t.mu.Lock()
		mine := t.held[p]
		t.mu.Unlock()
		if mine {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		if gone, err := left(f); err == nil && gone && samePath(f) {
			if os.Remove(p) == nil {
				removed++
			}
		}
		_ = f.Close()
	}
	return removed
}

// sweepAtStart sweeps as the server starts (none of its exports runs
// yet): the GeoPackages a killed process left are removed at once, and
// logged on log (nil: not logged).
func (t *exportTemps) sweepAtStart(log *slog.Logger) {
	if n := t.sweep(); n > 0 && log != nil {
		log.Info("records: removed temporary GeoPackages left by a process that ended while it wrote them", "files", n, "dir", t.dir)
	}
}
