package main_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAtkRecordsOGCQueryableNULIs500: through a real `arr up`, a key-less
// client sends a queryable of the OGC items route as a query parameter
// holding a NUL or invalid UTF-8 (address=%00): it is bound as text
// unchecked, PostgreSQL refuses the bind, and the public route answers
// 500 internal_error (an alert, a log line per request, for anyone on
// the Internet). The filter= path refuses the same text with 400; the
// parameter path should too.
func TestAtkRecordsOGCQueryableNULIs500(t *testing.T) {
	e := newEnv(t)
	e.up()
	ogc := e.records + "/api/v1/ogc/collections"
	if status, body := get(t, ogc+"/vacant/items?filter=address%20%3D%20%27%00%27", nil); status != http.StatusBadRequest {
		t.Fatalf("filter with a NUL: %d %s, want 400 (the lexer refuses it)", status, body)
	}
	for _, q := range []string{"vacant/items?address=%00", "parcels/items?apn=A%FFB", "tax_sale/items?county=24510%00"} {
		if status, body := get(t, ogc+"/"+q, nil); status >= 500 {
			t.Errorf("GET %s: %d %s; want 400 naming the parameter", q, status, body)
		}
	}
}

// TestAtkRecordsExportOneAccountTwoKeys: through a real `arr up`, one
// account with two records keys runs two exports at once, the two
// export slots of the process, and another account's export is refused
// 429 exports_busy for as long as they run (up to 10 minutes each, for
// a client that reads a little every 30 s). The exports are held where
// they start, in their snapshot's first read, by a lock on the parcels
// table (a stand-in for a slow client: either way the gate is held).
func TestAtkRecordsExportOneAccountTwoKeys(t *testing.T) {
	e := newEnv(t)
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	e.createAccount("alice@example.com", "free")
	e.createAccount("bob@example.com", "free")
	auth := func(k mintedKey) string { return "Bearer " + k.Secret }
	alice1, alice2 := auth(e.mint("alice@example.com", "records")), auth(e.mint("alice@example.com", "records"))
	bob := auth(e.mint("bob@example.com", "records"))
	api := e.records + "/api/v1/exports/parcels?county=24510&format=csv"
	bg := context.Background()
	lock, err := pool.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(bg) //nolint:errcheck
	if _, err := lock.Exec(bg, `LOCK TABLE rm_parcels.parcels IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		body   string
	}
	send := func(key string) chan answer {
		out := make(chan answer, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodGet, api, nil)
			req.Header.Set("Authorization", key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				out <- answer{0, err.Error()}
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			out <- answer{resp.StatusCode, strings.TrimSpace(string(b))}
		}()
		return out
	}
	waiting := func() int {
		return countRows(t, pool, `SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE NOT l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND c.relname = 'parcels'`)
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 20 s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	first := send(alice1)
	until("alice's first export waits in its snapshot", func() bool { return waiting() == 1 })
	second := send(alice2)
	var refused *answer
	until("alice's second key's export is refused or admitted", func() bool {
		select {
		case a := <-second:
			refused = &a
			return true
		default:
			return waiting() == 2
		}
	})
	var bobs answer
	if refused == nil {
		bobs = <-send(bob)
	}
	if err := lock.Rollback(bg); err != nil {
		t.Fatal(err)
	}
	<-first
	if refused == nil {
		<-second
		t.Fatalf("alice ran two exports at once with her two keys, both slots of the process; bob meanwhile: %d %s", bobs.status, bobs.body)
	}
	if refused.status != http.StatusTooManyRequests {
		t.Fatalf("alice's second key: %d %s", refused.status, refused.body)
	}
}

// TestAtkRecordsGeoPackageLeftByAKill: `arr up` killed (-9) while a
// GeoPackage export is being written leaves its temporary file (up to
// 1 GiB, x-export-max-gpkg-bytes) in the temporary directory. The
// process that starts next does not remove it, nor does its next
// GeoPackage export (it removes only files older than the export's time
// limit and a minute): the file stays until a GeoPackage export happens
// to run more than 11 minutes after the crash, or forever if none does.
// A crash-looping process fills the disk (often a tmpfs, in memory).
func TestAtkRecordsGeoPackageLeftByAKill(t *testing.T) {
	tmp := t.TempDir()
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "TMPDIR="+tmp)
	p := e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	e.createAccount("carol@example.com", "free")
	key := map[string]string{"Authorization": "Bearer " + e.mint("carol@example.com", "records").Secret}
	bg := context.Background()
	lock, err := pool.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(bg) //nolint:errcheck
	if _, err := lock.Exec(bg, `LOCK TABLE rm_parcels.parcels IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	go func() {
		req, _ := http.NewRequest(http.MethodGet, e.records+"/api/v1/exports/parcels?county=24510&format=gpkg", nil)
		req.Header.Set("Authorization", key["Authorization"])
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	files := func() []string {
		m, _ := filepath.Glob(filepath.Join(tmp, "arr-export-*.gpkg"))
		return m
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(files()) == 0 || countRows(t, pool, `SELECT count(*) FROM pg_locks WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the GeoPackage export did not start within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	left := files()
	p.kill()
	if err := lock.Rollback(bg); err != nil {
		t.Fatal(err)
	}
	e.up()
	// The next process runs a GeoPackage export of its own, whole.
	resp, _, _ := download(t, e.records+"/api/v1/exports/parcels?county=24510&format=gpkg", key, filepath.Join(t.TempDir(), "next.gpkg"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the next GeoPackage export: %d", resp.StatusCode)
	}
	for _, f := range left {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s, the temporary GeoPackage of the killed process, is still there after a restart and a GeoPackage export", filepath.Base(f))
		}
	}
}

// TestAtkRecordsExportOutlivesItsKey: an export admitted with a key that
// is revoked before the export sends its first byte still sends the
// whole file afterwards (it may run 10 minutes): a stolen key's owner
// revokes it, `arr keys revoke` returns once the revocation is in force,
// and the thief's bulk export of the county carries on regardless. The
// export should check its key is still in force before it sends (and
// between pages), and be cut off once it is not.
func TestAtkRecordsExportOutlivesItsKey(t *testing.T) {
	e := newEnv(t)
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	e.createAccount("dave@example.com", "free")
	k := e.mint("dave@example.com", "records")
	bg := context.Background()
	lock, err := pool.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(bg) //nolint:errcheck
	if _, err := lock.Exec(bg, `LOCK TABLE rm_parcels.parcels IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		status int
		n      int64
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, e.records+"/api/v1/exports/parcels?county=24510&format=csv", nil)
		req.Header.Set("Authorization", "Bearer "+k.Secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- answer{0, 0, err}
			return
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		done <- answer{resp.StatusCode, n, err}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for countRows(t, pool, `SELECT count(*) FROM pg_locks WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the export did not start within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.mustArr(nil, "keys", "revoke", "--id", k.ID, "--json")
	if status, _ := get(t, e.records+"/api/v1/key", map[string]string{"Authorization": "Bearer " + k.Secret}); status != http.StatusUnauthorized {
		t.Fatalf("the revoked key still authenticates: %d", status)
	}
	if err := lock.Rollback(bg); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.status == http.StatusOK && a.err == nil {
		t.Fatalf("the export of a key revoked before its first byte was sent whole after the revocation: %d, %d bytes", a.status, a.n)
	}
}
