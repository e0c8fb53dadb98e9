package export_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/export"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// TestWriteFile: an export replaces its file only when complete, keeping
// the file's permissions and following a symbolic link; a failed one
// leaves the file as it was and no temporary file; a path that is not a
// regular file is written to as a stream.
func TestWriteFile(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	st, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for i := range 10 {
		if _, err := st.Append(ctx, "s", eventstore.Any(), eventstore.NewEvent{ID: uuid.New(), Type: "KeyIssued", SchemaVersion: 1, Data: fmt.Appendf(nil, `{"n":%d}`, i)}); err != nil {
			t.Fatal(err)
		}
	}
	var want bytes.Buffer
	if _, err := export.Write(ctx, st, &want, export.Options{}); err != nil {
		t.Fatal(err)
	}
	old := []byte("earlier\n")
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		prepare func(t *testing.T, dir string) string // returns --out
		file    string                                // the file checked, relative to dir
		mode    os.FileMode                           // of file after the export
		want    []byte
		wantErr string
	}{
		{name: "new file", ctx: ctx, prepare: func(t *testing.T, dir string) string { return filepath.Join(dir, "out.ndjson") },
			file: "out.ndjson", mode: 0o666 &^ umask(t), want: want.Bytes()},
		{name: "replaces, keeping the mode", ctx: ctx, prepare: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "out.ndjson")
			write(t, p, old, 0o640)
			return p
		}, file: "out.ndjson", mode: 0o640, want: want.Bytes()},
		{name: "through a symbolic link", ctx: ctx, prepare: func(t *testing.T, dir string) string {
			write(t, filepath.Join(dir, "real.ndjson"), old, 0o600)
			if err := os.Symlink("real.ndjson", filepath.Join(dir, "link.ndjson")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "link.ndjson")
		}, file: "real.ndjson", mode: 0o600, want: want.Bytes()},
		{name: "failed", ctx: canceled, prepare: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "out.ndjson")
			write(t, p, old, 0o644)
			return p
		}, file: "out.ndjson", mode: 0o644, want: old, wantErr: "context canceled"},
		{name: "a directory that does not exist", ctx: ctx, prepare: func(t *testing.T, dir string) string { return filepath.Join(dir, "no", "out.ndjson") },
			wantErr: "creating a temporary file beside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := tc.prepare(t, dir)
			before := names(t, dir)
			_, err := export.WriteFile(tc.ctx, st, out, export.Options{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if after := names(t, dir); tc.file != "" && after != before && !(before == "" && after == tc.file) {
				t.Fatalf("the directory held %q, now %q", before, after)
			}
			if tc.file == "" {
				return
			}
			p := filepath.Join(dir, tc.file)
			got, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Stat(p)
			if !bytes.Equal(got, tc.want) || fi.Mode().Perm() != tc.mode {
				t.Fatalf("%s: %d bytes, mode %v; want %d bytes, mode %v", tc.file, len(got), fi.Mode().Perm(), len(tc.want), tc.mode)
			}
		})
	}
	t.Run("not a regular file", func(t *testing.T) {
		if _, err := export.WriteFile(ctx, st, os.DevNull, export.Options{}); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode().IsRegular() {
			t.Fatalf("%s after an export: %v %v", os.DevNull, fi, err)
		}
	})
}

func write(t *testing.T, path string, b []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// names lists dir's entries, sorted, one string.
func names(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, e := range es {
		s = append(s, e.Name())
	}
	return strings.Join(s, " ")
}

// umask reads the process's umask from the mode a new file gets.
func umask(t *testing.T) os.FileMode {
	t.Helper()
	p := filepath.Join(t.TempDir(), "probe")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, _ := os.Stat(p)
	return 0o666 &^ fi.Mode().Perm()
}
