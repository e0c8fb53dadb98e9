package main_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// TestAttackTiles attacks the tiles route of a real `arr up` on the demo
// data, one subtest per defect: a tile shared by several requests must
// not fail for all when the first hangs up or runs out of time; a
// cluster tile (it holds no score) must not be made again for another
// as_of; a flood of dense z10 tiles must not starve a z14 tile; HEAD is
// served; a read-model version that goes back, or a rebuild at the same
// position, is never served the tiles of before. Each subtest asks its
// own as_of, so none is answered from another's tiles. (The size bound
// of empty tiles is measured in-process: tilecache/cost_test.go.)
func TestAttackTiles(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey, "ARR_PUBLIC_RATE_LIMIT=100000")
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	a := &tileAttack{records: e.records, pool: pool}
	t.Run("HEAD", a.head)
	t.Run("first waiter hangs up", a.firstHangsUp)
	t.Run("first waiter times out", a.firstTimesOut)
	t.Run("z14 during a z10 flood", a.flood)
	t.Run("cluster tile not busted by as_of", a.clusterAsOf)
	t.Run("position going back", a.positionBack)
	t.Run("rebuild at the same position", func(t *testing.T) { a.rebuild(t, e) })
}

type tileAttack struct {
	records string
	pool    *pgxpool.Pool
}

// tileAnswer is what a tile request was answered.
type tileAnswer struct {
	status                     int
	etag, cache, ctype, length string
	body                       []byte
	code                       string
	err                        error
}

// url is tile z of the point lon, lat (central Baltimore by default), as of day.
func (a *tileAttack) url(z int, day string) string {
	x, y := tileOf(-76.65104057, 39.30941765, z)
	if z == 10 {
		x, y = tileOf(-76.61, 39.30, 10)
	}
	return fmt.Sprintf("%s/api/v1/tiles/%d/%d/%d.mvt?as_of=%s", a.records, z, x, y, day)
}

func askTile(ctx context.Context, method, u, inm string) tileAnswer {
	req, _ := http.NewRequestWithContext(ctx, method, u, nil)
	if inm != "" {
		req.Header.Set("If-None-Match", inm)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return tileAnswer{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	code, _ := problemOf(b)
	return tileAnswer{status: resp.StatusCode, etag: resp.Header.Get("ETag"), cache: resp.Header.Get("X-Tile-Cache"),
		ctype: resp.Header.Get("Content-Type"), length: resp.Header.Get("Content-Length"), body: b, code: code}
}

// lockParcels holds the parcels read model locked (as a long load or a
// migration would) until release: every tile query waits on it.
func (a *tileAttack) lockParcels(t *testing.T) (release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := a.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE rm_parcels.parcels IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { _ = tx.Rollback(ctx) }) }
	t.Cleanup(release)
	return release
}

// waitingTiles is how many tile queries wait on a lock.
func (a *tileAttack) waitingTiles(t *testing.T) int {
	t.Helper()
	var n int
	if err := a.pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE wait_event_type = 'Lock' AND query LIKE '%ST_TileEnvelope%' AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

var tileETagShape = regexp.MustCompile(`^"(\d+)\.(\d+)-([0-9a-f]{24})"$`)

// head: HEAD answers what GET answers, headers and all, with no body; the
// ETag names the version and the SHA-256 of the bytes GET sends.
func (a *tileAttack) head(t *testing.T) {
	ctx := context.Background()
	u := a.url(14, "2020-05-01")
	h := askTile(ctx, http.MethodHead, u, "")
	if h.err != nil || h.status != 200 || len(h.body) != 0 || h.cache != "miss" || h.ctype != "application/vnd.mapbox-vector-tile" {
		t.Fatalf("HEAD: %d %v, %d bytes of body, X-Tile-Cache %q, Content-Type %q", h.status, h.err, len(h.body), h.cache, h.ctype)
	}
	g := askTile(ctx, http.MethodGet, u, "")
	if g.status != 200 || g.etag != h.etag || g.cache != "hit" || g.length != h.length || g.length != strconv.Itoa(len(g.body)) {
		t.Fatalf("GET after HEAD: %d, ETag %q (HEAD %q), X-Tile-Cache %q, Content-Length %q (HEAD %q, body %d)",
			g.status, g.etag, h.etag, g.cache, g.length, h.length, len(g.body))
	}
	m := tileETagShape.FindStringSubmatch(g.etag)
	sum := sha256.Sum256(g.body)
	if m == nil || m[3] != hex.EncodeToString(sum[:12]) {
		t.Fatalf("ETag %s: not the version and the first 12 bytes of the tile's SHA-256 (%x)", g.etag, sum[:12])
	}
	if n := askTile(ctx, http.MethodHead, u, g.etag); n.status != 304 || len(n.body) != 0 {
		t.Fatalf("HEAD with If-None-Match %s: %d, %d bytes", g.etag, n.status, len(n.body))
	}
	empty := fmt.Sprintf("%s/api/v1/tiles/14/8192/8192.mvt?as_of=2020-05-01", a.records) // the Gulf of Guinea
	if n := askTile(ctx, http.MethodHead, empty, ""); n.status != 204 || n.etag == "" {
		t.Fatalf("HEAD of an empty tile: %d, ETag %q", n.status, n.etag)
	}
}

// firstHangsUp: three requests share one tile query; the first hangs up
// while it waits (behind a lock); the query goes on for the other two,
// which get the tile.
func (a *tileAttack) firstHangsUp(t *testing.T) {
	release := a.lockParcels(t)
	u := a.url(14, "2021-01-01")
	first, cancel := context.WithCancel(context.Background())
	defer cancel()
	firstDone := make(chan tileAnswer, 1)
	go func() { firstDone <- askTile(first, http.MethodGet, u, "") }()
	eventually(t, 10*time.Second, "the first request's tile query waiting on the lock", func() bool { return a.waitingTiles(t) == 1 })
	others := make(chan tileAnswer, 2)
	for range 2 {
		go func() { others <- askTile(context.Background(), http.MethodGet, u, "") }()
	}
	time.Sleep(500 * time.Millisecond) // the two others have joined the first's query
	cancel()
	if f := <-firstDone; f.err == nil {
		t.Fatalf("the first request was answered %d before it hung up", f.status)
	}
	time.Sleep(300 * time.Millisecond) // the server has seen the hang-up
	if n := a.waitingTiles(t); n != 1 {
		t.Errorf("%d tile queries wait after the first request hung up, want its one query, still running for the others", n)
	}
	release()
	for range 2 {
		if o := <-others; o.err != nil || o.status != 200 || o.cache != "miss" {
			t.Errorf("a request that shared the hung-up request's tile: %d %s %v (X-Tile-Cache %q), want the tile", o.status, o.code, o.err, o.cache)
		}
	}
}

// firstTimesOut: the first request's tile query runs out of its 5 s
// behind a lock; a second request that joined it a second later has time
// left: it starts one more query, which gets the tile once the lock is
// gone.
func (a *tileAttack) firstTimesOut(t *testing.T) {
	release := a.lockParcels(t)
	u := a.url(14, "2021-02-01")
	firstDone := make(chan tileAnswer, 1)
	go func() { firstDone <- askTile(context.Background(), http.MethodGet, u, "") }()
	eventually(t, 10*time.Second, "the first request's tile query waiting on the lock", func() bool { return a.waitingTiles(t) == 1 })
	time.Sleep(time.Second)
	secondDone := make(chan tileAnswer, 1)
	go func() { secondDone <- askTile(context.Background(), http.MethodGet, u, "") }()
	f := <-firstDone
	if f.status != 503 || f.code != "query_timeout" {
		t.Fatalf("the first request: %d %s %v, want 503 query_timeout", f.status, f.code, f.err)
	}
	release()
	if s := <-secondDone; s.err != nil || s.status != 200 {
		t.Fatalf("the request that joined the timed-out query: %d %s %v, want the tile from one more query", s.status, s.code, s.err)
	}
}

// flood: forty dense z10 tiles (clusters, each a read of every parcel of
// central Baltimore, each of another as_of) are asked at once; a z14 tile
// asked while they run is answered (its time is logged, not asserted).
func (a *tileAttack) flood(t *testing.T) {
	const n = 40
	asked := time.Now()
	alone := askTile(context.Background(), http.MethodGet, a.url(14, "2023-05-31"), "")
	t.Logf("z14 tile alone: %d in %s", alone.status, time.Since(asked))
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[string]int{}
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := askTile(context.Background(), http.MethodGet, a.url(10, time.Date(2023, 1, 1+i, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)), "")
			mu.Lock()
			statuses[strings.TrimSpace(fmt.Sprintf("%d %s", r.status, r.code))]++
			mu.Unlock()
		}()
	}
	time.Sleep(300 * time.Millisecond) // the flood is in
	asked = time.Now()
	z14 := askTile(context.Background(), http.MethodGet, a.url(14, "2023-06-01"), "")
	took := time.Since(asked)
	wg.Wait()
	t.Logf("z14 tile during a flood of %d z10 tiles: %d %s in %s; the flood: %v in %s", n, z14.status, z14.code, took, statuses, time.Since(start))
	if z14.status != 200 {
		t.Errorf("the z14 tile during the flood: %d %s %v, want 200", z14.status, z14.code, z14.err)
	}
}

// clusterAsOf: the dense z10 tile is clusters past its cap, which hold no
// score: asked as of another day it is the same bytes, so it comes from
// the cache; a z14 tile of parcels
// (scored) asked as of another day is made again.
func (a *tileAttack) clusterAsOf(t *testing.T) {
	ctx := context.Background()
	first := askTile(ctx, http.MethodGet, a.url(10, "2024-03-01"), "")
	if first.status != 200 {
		t.Fatalf("z10 tile: %d %s", first.status, first.code)
	}
	for _, day := range []string{"2024-03-02", "2019-07-04"} {
		again := askTile(ctx, http.MethodGet, a.url(10, day), "")
		if again.status != 200 || again.cache != "hit" || again.etag != first.etag || string(again.body) != string(first.body) {
			t.Errorf("z10 cluster tile as of %s: %d, X-Tile-Cache %q, ETag %q (first %q): want the cached tile", day, again.status, again.cache, again.etag, first.etag)
		}
	}
	askTile(ctx, http.MethodGet, a.url(14, "2024-03-01"), "")
	if z14 := askTile(ctx, http.MethodGet, a.url(14, "2024-03-02"), ""); z14.status != 200 || z14.cache != "miss" {
		t.Errorf("a z14 tile of parcels as of another day: %d, X-Tile-Cache %q, want one made for its day", z14.status, z14.cache)
	}
}

// positionBack: the loads' largest position goes back (the last load's
// row is moved below the others, as a restored backup would): the tile is
// made anew, under another ETag; once the position is back where it was,
// the tile is made anew again, with the ETag of before (same version, same
// bytes).
func (a *tileAttack) positionBack(t *testing.T) {
	ctx := context.Background()
	u := a.url(14, "2024-04-01")
	before := askTile(ctx, http.MethodGet, u, "")
	if before.status != 200 {
		t.Fatalf("tile: %d %s", before.status, before.code)
	}
	move := func(sql string) {
		t.Helper()
		if _, err := a.pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	move(`UPDATE rm_parcels.loads SET position = -position WHERE position = (SELECT max(position) FROM rm_parcels.loads)`)
	back := askTile(ctx, http.MethodGet, u, "")
	if back.status != 200 || back.cache != "miss" || back.etag == before.etag {
		t.Errorf("after the position went back: %d, X-Tile-Cache %q, ETag %q (before %q): want a tile made anew", back.status, back.cache, back.etag, before.etag)
	}
	if old := askTile(ctx, http.MethodGet, u, before.etag); old.status != 200 {
		t.Errorf("the ETag of the later position is %d after the position went back, want 200", old.status)
	}
	move(`UPDATE rm_parcels.loads SET position = -position WHERE position < 0`)
	again := askTile(ctx, http.MethodGet, u, "")
	if again.cache != "miss" || again.etag != before.etag || string(again.body) != string(before.body) {
		t.Errorf("back at the position: X-Tile-Cache %q, ETag %q (before %q): want the tile made anew, as before", again.cache, again.etag, before.etag)
	}
}

// rebuild: `arr projections rebuild parcels` swaps in a new schema at the
// same position: the tile is made anew; its ETag names the new schema,
// the same position and the same bytes; the ETag of before is not 304.
func (a *tileAttack) rebuild(t *testing.T, e *env) {
	ctx := context.Background()
	u := a.url(14, "2024-05-01")
	before := askTile(ctx, http.MethodGet, u, "")
	e.mustArr(nil, "projections", "rebuild", "parcels")
	waitCaughtUp(t, a.pool, 90*time.Second)
	after := askTile(ctx, http.MethodGet, u, "")
	b, f := tileETagShape.FindStringSubmatch(before.etag), tileETagShape.FindStringSubmatch(after.etag)
	if b == nil || f == nil || after.cache != "miss" || f[1] == b[1] || f[2] != b[2] || f[3] != b[3] {
		t.Fatalf("after a rebuild: X-Tile-Cache %q, ETag %q (before %q): want a tile made anew, of a new schema, the same position and bytes", after.cache, after.etag, before.etag)
	}
	if old := askTile(ctx, http.MethodGet, u, before.etag); old.status != 200 {
		t.Errorf("the ETag of before the rebuild is %d after it, want 200", old.status)
	}
}
