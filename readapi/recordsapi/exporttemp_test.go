//go:build unix

package recordsapi

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExportTempsSweepOnlyTheLeft: a sweep removes the temporary
// GeoPackages no live export holds (a file a killed process left, which
// holds no lock) at once, whatever their age, and never one that an
// export holds, of this server or of another in the same directory.
func TestExportTempsSweepOnlyTheLeft(t *testing.T) {
	dir := t.TempDir()
	left := filepath.Join(dir, "arr-export-123.gpkg")
	if err := os.WriteFile(left, []byte("half a GeoPackage"), 0o600); err != nil {
		t.Fatal(err)
	}
	mine, other := newExportTemps(dir), newExportTemps(dir)
	a, err := mine.create()
	if err != nil {
		t.Fatal(err)
	}
	b, err := other.create()
	if err != nil {
		t.Fatal(err)
	}
	if n := mine.sweep(); n != 1 {
		t.Fatalf("the sweep removed %d files, want 1 (the one left)", n)
	}
	for _, p := range []string{a.path, b.path} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("a held file was swept: %v", err)
		}
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("the left file is still there: %v", err)
	}
	a.release()
	b.release()
	if m, _ := filepath.Glob(filepath.Join(dir, gpkgPattern)); len(m) != 0 {
		t.Fatalf("released files are still there: %v", m)
	}
}
