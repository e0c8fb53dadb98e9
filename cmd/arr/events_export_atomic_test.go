package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/eventstore"
)

// exportTemps lists the files of dir but name, with their sizes: the
// export's temporary files.
func exportTemps(t *testing.T, dir, name string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, en := range entries {
		if en.Name() == name {
			continue
		}
		if fi, err := en.Info(); err == nil {
			out[en.Name()] = fi.Size()
		}
	}
	return out
}

// midExport waits until the export p writes to out's directory (out no
// longer holds want, or a new file there has bytes) and then holds the
// events table (ACCESS EXCLUSIVE) so that its next read waits: the export
// is mid-way when the test stops it. The lock is released when the test
// ends or release is called.
func midExport(t *testing.T, p *proc, pool *pgxpool.Pool, out string, want []byte) (release func()) {
	t.Helper()
	dir, name := filepath.Dir(out), filepath.Base(out)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
			break
		}
		written := false
		for _, size := range exportTemps(t, dir, name) {
			written = written || size > 0
		}
		if written {
			break
		}
		select {
		case <-p.done:
			t.Fatalf("the export ended before the test could stop it mid-way; logs:\n%s", p.logs.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the export wrote nothing in 60s; logs:\n%s", p.logs.String())
		}
	}
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE events IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	release = func() { _ = tx.Rollback(ctx) }
	t.Cleanup(release)
	select {
	case <-p.done:
		t.Fatalf("the export ended before the test could stop it mid-way; logs:\n%s", p.logs.String())
	default:
	}
	return release
}

// TestEventsExportIsAtomic: kill -9 of `arr events export --out F` while
// it is mid-way through a 24 MB log leaves an existing F as it was (not
// truncated, no torn line); an export that runs to the end replaces F
// with the whole log; one stopped by SIGTERM mid-way leaves F as it was
// and no temporary file.
func TestEventsExportIsAtomic(t *testing.T) {
	const n = 60000
	e := newEnv(t)
	e.up()
	pool := testPool(t, e)
	pad := strings.Repeat("x", 300)
	evs := make([]eventstore.NewEvent, n)
	for i := range evs {
		evs[i] = eventstore.NewEvent{ID: uuid.New(), Type: "Seeded", SchemaVersion: 1,
			Data: json.RawMessage(fmt.Sprintf(`{"i":%d,"pad":%q}`, i, pad)), Metadata: eventstore.Metadata{Actor: "test"}}
	}
	appendBulk(t, pool, "test-export", evs)
	head := logHead(t, pool)

	dir := t.TempDir()
	out := filepath.Join(dir, "log.ndjson")
	previous := []byte("{\"an\":\"earlier export\"}\n{\"of\":\"two lines\"}\n")
	if err := os.WriteFile(out, previous, 0o644); err != nil {
		t.Fatal(err)
	}

	p := e.start("events", "export", "--out", out)
	release := midExport(t, p, pool, out, previous)
	p.kill()
	release()
	if got, _ := os.ReadFile(out); !bytes.Equal(got, previous) {
		t.Fatalf("after kill -9 mid-export %s holds %d bytes (starting %.60q), want the earlier export (%d bytes) untouched", out, len(got), got, len(previous))
	}
	temps := exportTemps(t, dir, "log.ndjson")
	if len(temps) != 1 {
		t.Fatalf("after kill -9 the directory holds %v, want one temporary file beside %s", temps, out)
	}
	for name, size := range temps {
		if !strings.HasPrefix(name, ".log.ndjson.tmp-") || size == 0 {
			t.Fatalf("temporary file %s (%d bytes): want .log.ndjson.tmp-* with what the export had written", name, size)
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}

	// To the end: F is the whole log, and nothing else is left.
	if _, errs, code := e.arr("events", "export", "--out", out); code != 0 {
		t.Fatalf("export: exit %d %s", code, errs)
	}
	whole, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(whole))
	sc.Buffer(nil, 1<<20)
	var lines int64
	for sc.Scan() {
		var ev exportedEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %d of the export: %v", lines+1, err)
		}
		lines++
		if int64(ev.Position) != lines {
			t.Fatalf("line %d holds position %d", lines, ev.Position)
		}
	}
	if lines < head {
		t.Fatalf("the export holds %d events, the log %d", lines, head)
	}
	if left := exportTemps(t, dir, "log.ndjson"); len(left) != 0 {
		t.Fatalf("after a finished export the directory also holds %v", left)
	}

	// SIGTERM mid-way: F stays the finished export; the temporary file goes.
	p = e.start("events", "export", "--out", out)
	release = midExport(t, p, pool, out, whole)
	p.stop(t)
	release()
	if got, _ := os.ReadFile(out); !bytes.Equal(got, whole) {
		t.Fatalf("after SIGTERM mid-export %s holds %d bytes, want the finished export (%d bytes)", out, len(got), len(whole))
	}
	if left := exportTemps(t, dir, "log.ndjson"); len(left) != 0 {
		t.Fatalf("after SIGTERM the directory also holds %v; logs:\n%s", left, p.logs.String())
	}
}
