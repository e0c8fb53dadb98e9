package main_test

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// TestRecordsTileCacheAfterLoad: a tile asked twice is made once (the
// second answer is X-Tile-Cache: hit, with the same ETag); its ETag in
// If-None-Match is 304; once another load completes, the same tile is
// made anew at the new position (miss, another ETag), and the old ETag
// is no longer 304: the cache never serves a tile of an older position.
func TestRecordsTileCacheAfterLoad(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey)
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	x, y := tileOf(-76.65104057, 39.30941765, 14)
	u := fmt.Sprintf("%s/api/v1/tiles/14/%d/%d.mvt", e.records, x, y)
	ask := func(inm string) (int, string, string, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", u, nil)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("X-Tile-Cache"), b
	}
	st, etag, cache, first := ask("")
	if st != 200 || etag == "" || cache != "miss" {
		t.Fatalf("first ask: %d, ETag %q, X-Tile-Cache %q", st, etag, cache)
	}
	if st, e2, cache, again := ask(""); st != 200 || e2 != etag || cache != "hit" || string(again) != string(first) {
		t.Fatalf("second ask: %d, ETag %q (first %q), X-Tile-Cache %q, same body %v", st, e2, etag, cache, string(again) == string(first))
	}
	if st, _, _, b := ask(etag); st != 304 || len(b) != 0 {
		t.Fatalf("If-None-Match %s: %d, %d bytes", etag, st, len(b))
	}
	files := filepath.Join("..", "..", "adapters", "demodata", "files")
	out, errs, code := e.arr("load", "layer", "--layer", "tax_sale", "--county", "24510", "--source-url", "https://www.bidbaltimore.com/",
		"--source-date", "2019-05-30", "--mapping", filepath.Join(files, "tax_sale.mapping.json"), "--wait", "--json",
		filepath.Join(files, "baltimore-md_tax_sale_certificates_2019.csv.gz"))
	if code != 0 {
		t.Fatalf("arr load layer --wait: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	st, after, cache, _ := ask("")
	if st != 200 || after == etag || cache != "miss" {
		t.Fatalf("after a load: %d, ETag %q (before %q), X-Tile-Cache %q: want a tile made anew", st, after, etag, cache)
	}
	if st, _, _, _ := ask(etag); st != 200 {
		t.Fatalf("the ETag of before the load is %d after it, want 200", st)
	}
}
