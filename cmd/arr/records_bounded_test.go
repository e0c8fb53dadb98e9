package main_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// sawtooth is a legal POST /api/v1/parcels/query body: a polygon of n
// positions over 2 degrees around Baltimore whose top edge is a saw-tooth
// (the costliest shape the limits allow: many edges, a large box).
func sawtooth(n int) []byte {
	const w, e, s, north = -77.6, -75.6, 38.3, 40.3
	k := n - 3
	ring := [][2]float64{{w, s}}
	for i := range k {
		y := north
		if i%2 == 1 {
			y = s + 0.05
		}
		ring = append(ring, [2]float64{w + (e-w)*float64(i)/float64(k-1), y})
	}
	ring = append(ring, [2]float64{e, s}, [2]float64{w, s})
	b, _ := json.Marshal(map[string]any{"geometry": map[string]any{"type": "Polygon", "coordinates": [][][2]float64{ring}}, "limit": 1000})
	return b
}

// problemOf is the code and message of an error body, "" for another body.
func problemOf(body []byte) (string, string) {
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error.Code, e.Error.Message
}

// TestRecordsStatementTimeout holds a lock on the parcels read model (as a
// long load or a migration would) so that every parcel query waits: a
// search must answer 503 query_timeout naming its route's limit instead
// of hanging, and while twenty such searches wait, admission (a keyed
// request's key look-up and quota count) and /healthz must still answer
// at once, on connections of their own.
func TestRecordsStatementTimeout(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey, "ARR_PUBLIC_RATE_LIMIT=100000")
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	e.createAccount("timeout@example.com", "free")
	key := e.mint("timeout@example.com", "records")
	api := e.records + "/api/v1"
	bbox := api + "/parcels?bbox=-76.66,39.30,-76.64,39.32&limit=5"

	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE rm_parcels.parcels IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 20 * time.Second}
	// Twenty searches wait on the lock, more than the main pool holds.
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	codes := make([]string, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Get(bbox)
			if err != nil {
				codes[i] = err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
			codes[i], _ = problemOf(b)
		}()
	}
	time.Sleep(time.Second)
	// Admission and health do not wait behind them.
	quick := &http.Client{Timeout: 3 * time.Second}
	for _, u := range []string{api + "/key", e.records + "/healthz"} {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("X-API-Key", key.Secret)
		start := time.Now()
		resp, err := quick.Do(req)
		if err != nil {
			t.Fatalf("GET %s while twenty searches wait: %v (after %s)", u, err, time.Since(start).Round(time.Millisecond))
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s while twenty searches wait: %d", u, resp.StatusCode)
		}
	}
	wg.Wait()
	for i := range 20 {
		if statuses[i] != 503 || codes[i] != "query_timeout" {
			t.Fatalf("search %d behind a lock: %d %q, want 503 query_timeout", i, statuses[i], codes[i])
		}
	}
	resp, err := client.Get(bbox)
	if err != nil {
		t.Fatalf("a search behind a lock: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	code, msg := problemOf(b)
	if resp.StatusCode != 503 || code != "query_timeout" || !strings.Contains(msg, "5s") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a search behind a lock: %d %s %v", resp.StatusCode, b, resp.Header)
	}
	// No statement of the cancelled requests still runs on the server.
	var running int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query LIKE '%rm_parcels.parcels%' AND pid <> pg_backend_pid()`).Scan(&running); err != nil {
		t.Fatal(err)
	}
	if running != 0 {
		t.Fatalf("%d parcel queries still run after their requests were answered", running)
	}
	_ = tx.Rollback(ctx)
	getJSON(t, bbox, nil, 200, nil)
}

// TestRecordsDatesBounded: a date the database cannot hold is a 400 on
// every route that takes one, not a 500 on some.
func TestRecordsDatesBounded(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey)
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	e.createAccount("dates@example.com", "free")
	key := e.mint("dates@example.com", "records")
	h := map[string]string{"X-API-Key": key.Secret}
	x, y := tileOf(-76.65104057, 39.30941765, 14)
	api := e.records + "/api/v1"
	for _, d := range []string{"0000-01-01", "1899-12-31", "10000-01-01", "2026-02-30"} {
		for _, u := range []string{fmt.Sprintf("%s/tiles/14/%d/%d.mvt?as_of=%s", api, x, y, d), api + "/signals/0001%20003?county=24510&as_of=" + d} {
			st, body := get(t, u, h)
			if code, _ := problemOf(body); st != 400 || code != "invalid_as_of" {
				t.Fatalf("GET %s: %d %s, want 400 invalid_as_of", u, st, body)
			}
		}
	}
	for _, d := range []string{"1900-01-01", "9999-12-31"} {
		if st, body := get(t, fmt.Sprintf("%s/tiles/14/%d/%d.mvt?as_of=%s", api, x, y, d), nil); st != 200 {
			t.Fatalf("tile as of %s: %d %s", d, st, body)
		}
	}
}

// TestRecordsWorstCaseLoad sends twenty of each worst-case request (the
// 1,000-position saw-tooth polygon; the z10 tile of the densest demo
// area, Baltimore) at once while a normal client pages through bbox
// searches: the normal client must get no error, and every worst-case
// request must end, with 200 or the documented 503 query_timeout, within
// a generous deadline. The normal client's median latency is logged
// (scripts/bench/records-worstcase.sh reports it over several runs).
func TestRecordsWorstCaseLoad(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey, "ARR_PUBLIC_RATE_LIMIT=100000")
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	r := worstCaseLoad(t, e.records, 20, 45*time.Second)
	t.Logf("normal bbox client: %d requests, p50 %s alone, p50 %s under load, %d errors; worst case: %d of %d ended (statuses %v) in %s",
		r.normalN, r.aloneP50, r.loadP50, len(r.normalErrors), r.worstEnded, r.worstTotal, r.worstStatuses, r.worstTook)
	if len(r.normalErrors) > 0 {
		t.Errorf("the normal client got %d errors under load, first %s", len(r.normalErrors), r.normalErrors[0])
	}
	if r.worstEnded != r.worstTotal {
		t.Errorf("%d of %d worst-case requests did not end within the deadline", r.worstTotal-r.worstEnded, r.worstTotal)
	}
	for st := range r.worstStatuses {
		if !slices.Contains([]string{"200", "503 query_timeout", "422"}, st) {
			t.Errorf("a worst-case request answered %s", st)
		}
	}
}

type loadResult struct {
	normalN           int
	aloneP50, loadP50 time.Duration
	normalErrors      []string
	worstEnded        int
	worstTotal        int
	worstStatuses     map[string]int
	worstTook         time.Duration
}

// worstCaseLoad measures the normal client alone, then under n worst-case
// requests of each kind, each given deadline to end.
func worstCaseLoad(t testing.TB, records string, n int, deadline time.Duration) loadResult {
	t.Helper()
	api := records + "/api/v1"
	normal := func(stop <-chan struct{}, max int) ([]time.Duration, []string) {
		var lat []time.Duration
		var errs []string
		client := &http.Client{Timeout: 30 * time.Second}
		for i := 0; i < max; i++ {
			select {
			case <-stop:
				return lat, errs
			default:
			}
			// Boxes of about 500 m across central Baltimore, one after the other.
			w := -76.66 + float64(i%10)*0.005
			u := fmt.Sprintf("%s/parcels?bbox=%.3f,39.29,%.3f,39.295&limit=100", api, w, w+0.005)
			start := time.Now()
			resp, err := client.Get(u)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lat = append(lat, time.Since(start))
			if resp.StatusCode != 200 {
				errs = append(errs, fmt.Sprintf("%s: %d", u, resp.StatusCode))
			}
		}
		return lat, errs
	}
	p50 := func(d []time.Duration) time.Duration {
		if len(d) == 0 {
			return 0
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	alone, errs := normal(nil, 50)
	r := loadResult{aloneP50: p50(alone), normalErrors: errs, worstStatuses: map[string]int{}, worstTotal: 2 * n}

	x, y := tileOf(-76.61, 39.30, 10)
	tile := fmt.Sprintf("%s/tiles/10/%d/%d.mvt", api, x, y)
	poly := sawtooth(1000)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	for i := range 2 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var req *http.Request
			if i%2 == 0 {
				req, _ = http.NewRequestWithContext(ctx, "POST", api+"/parcels/query", bytes.NewReader(poly))
				req.Header.Set("Content-Type", "application/json")
			} else {
				req, _ = http.NewRequestWithContext(ctx, "GET", tile, nil)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return // did not end within the deadline
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			st := fmt.Sprint(resp.StatusCode)
			if code, _ := problemOf(b); code != "" {
				st += " " + code
			}
			mu.Lock()
			r.worstEnded++
			r.worstStatuses[st]++
			mu.Unlock()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	time.Sleep(200 * time.Millisecond) // the worst-case requests are in
	stop := make(chan struct{})
	var loaded []time.Duration
	nd := make(chan struct{})
	go func() {
		var errs []string
		loaded, errs = normal(stop, 10000)
		r.normalErrors = append(r.normalErrors, errs...)
		close(nd)
	}()
	<-done
	r.worstTook = time.Since(start)
	close(stop)
	<-nd
	r.normalN, r.loadP50 = len(alone)+len(loaded), p50(loaded)
	return r
}

// TestRecordsCursorAuthenticated: a cursor whose bytes were changed (here
// the parcel it continues after, to skip to a parcel of the caller's
// choosing) is 400 invalid_cursor, while an unchanged cursor pages on in
// another records process of the same database (the key is the
// installation's, not the process's).
func TestRecordsCursorAuthenticated(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey)
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	first := e.records + "/api/v1/parcels?bbox=-76.66,39.30,-76.64,39.32&limit=5"
	var p1 searchPage
	getJSON(t, first, nil, 200, &p1)
	if p1.NextCursor == nil {
		t.Fatal("no next_cursor on a full page")
	}
	raw, err := base64.RawURLEncoding.DecodeString(*p1.NextCursor)
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func([]byte){
		"the APN's last byte": func(b []byte) { b[len(b)-1]++ },
		"the county":          func(b []byte) { b[len(b)-len(p1.Features[4].Properties.APN)-3]++ },
	} {
		b := slices.Clone(raw)
		change(b)
		u := first + "&cursor=" + base64.RawURLEncoding.EncodeToString(b)
		st, body := get(t, u, nil)
		if code, _ := problemOf(body); st != 400 || code != "invalid_cursor" {
			t.Errorf("a cursor with %s changed: %d %s, want 400 invalid_cursor", name, st, body)
		}
	}
	var p2 searchPage
	getJSON(t, first+"&cursor="+*p1.NextCursor, nil, 200, &p2)
	// Another records process of the same database reads the cursor.
	addr := freeAddr(t)
	e.extraEnv = append(e.extraEnv, "ARR_RECORDS_ADDR="+addr)
	other := e.start("serve", "records")
	waitHealthy(t, "http://"+addr, other)
	var again searchPage
	getJSON(t, "http://"+addr+"/api/v1/parcels?bbox=-76.66,39.30,-76.64,39.32&limit=5&cursor="+*p1.NextCursor, nil, 200, &again)
	if len(p2.Features) == 0 || !slices.Equal(again.ids(), p2.ids()) {
		t.Fatalf("the second page from another process: %v, from the first: %v", again.ids(), p2.ids())
	}
}

// TestImportListRefusesGuesses imports real exports as a user would, with
// `arr import list`: a header with two parcel columns (Broward's folio
// and bcpa_folio), a quote that is never closed and a county written as a
// name are each refused with the line named, and nothing is imported;
// the well-formed rows of the same exports import.
func TestImportListRefusesGuesses(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_MASTER_KEY="+testMasterKey)
	e.createAccount("lists@example.com", "free")
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"broward_lis_pendens.csv", []string{"line 1", `"folio"`, `"bcpa_folio"`, "apn column"}},
		{"orange_code_violations_unclosed.csv", []string{"line 3", "quote"}},
		{"baltimore_vacants_county_name.csv", []string{"line 2", `"Baltimore City"`, "5-digit FIPS"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out, errs, code := e.arr("import", "list", "--email", "lists@example.com", "--json", filepath.Join("testdata", "lists", tc.file))
			if code == 0 {
				t.Fatalf("imported: %s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Errorf("the refusal does not say %s: %s", w, errs)
				}
			}
		})
	}
	// The same exports, fixed as the messages say, import.
	dir := t.TempDir()
	fixed := map[string]func(string) string{
		"broward_lis_pendens.csv": func(s string) string { return strings.Replace(s, ",folio,", ",county_folio,", 1) },
		"orange_code_violations_unclosed.csv": func(s string) string {
			return strings.Replace(s, `APARTMENT 9101,`, `APARTMENT 9101",`, 1)
		},
		"baltimore_vacants_county_name.csv": func(s string) string { return strings.ReplaceAll(s, "Baltimore City", "24510") },
	}
	for name, fix := range fixed {
		b, err := os.ReadFile(filepath.Join("testdata", "lists", name))
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(fix(string(b))), 0o600); err != nil {
			t.Fatal(err)
		}
		var res struct{ Rows int }
		e.mustArr(&res, "import", "list", "--email", "lists@example.com", "--json", f)
		if res.Rows < 3 {
			t.Errorf("%s fixed: %d rows imported", name, res.Rows)
		}
	}
}

// TestLoadLayerWaitsAndAnalyzes loads the real Baltimore tax-sale file
// (22,742 certificates) with `arr load layer --wait` while `arr up` runs
// the projections, under a read-your-writes bound far shorter than the
// load's publishing: --wait must wait as long as the load needs, showing
// progress, and succeed; and the tables the load rewrote must have
// planner statistics at once (ANALYZE in the load's transaction), so an
// APN look-up is planned on the index, not on an empty table's guess.
func TestLoadLayerWaitsAndAnalyzes(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_READ_YOUR_WRITES_TIMEOUT=50ms")
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	files := filepath.Join("..", "..", "adapters", "demodata", "files")
	out, errs, code := e.arr("load", "layer", "--layer", "tax_sale", "--county", "24510", "--source-url", "https://www.bidbaltimore.com/",
		"--source-date", "2019-05-29", "--mapping", filepath.Join(files, "tax_sale.mapping.json"), "--wait", "--json",
		filepath.Join(files, "baltimore-md_tax_sale_certificates_2019.csv.gz"))
	if code != 0 {
		t.Fatalf("arr load layer --wait: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if !strings.Contains(errs, "waiting for parcels") {
		t.Errorf("--wait showed no progress: %s", errs)
	}
	// The load is applied: its parcels are there when --wait returns.
	var parcels int
	ctx := context.Background()
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM rm_parcels.parcels`).Scan(&parcels); err != nil || parcels < 20000 {
		t.Fatalf("after --wait: %d parcels (%v)", parcels, err)
	}
	// Planner statistics of the load, not of an empty table.
	for _, table := range []string{"parcels", "parcel_layers"} {
		var reltuples float64
		var cols int
		if err := pool.QueryRow(ctx, `SELECT c.reltuples, (SELECT count(*) FROM pg_stats s WHERE s.schemaname = 'rm_parcels' AND s.tablename = $1)
			FROM pg_class c WHERE c.oid = ('rm_parcels.' || $1)::regclass`, table).Scan(&reltuples, &cols); err != nil {
			t.Fatal(err)
		}
		if reltuples < 0.9*float64(parcels) || cols == 0 {
			t.Errorf("rm_parcels.%s after the load: planner estimate %.0f rows (%d in the table), statistics of %d columns", table, reltuples, parcels, cols)
		}
	}
	var plan string
	rows, err := pool.Query(ctx, `EXPLAIN (FORMAT TEXT) SELECT county, apn FROM rm_parcels.parcels WHERE apn_norm = '0001003' ORDER BY county, apn LIMIT 20`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan += line + "\n"
	}
	rows.Close()
	if !strings.Contains(plan, "Index") {
		t.Errorf("an APN look-up after the load is planned as %s", plan)
	}
}

// TestRecordsTileCapped: the z10 tile of Baltimore, the densest demo area,
// holds every one of its parcels but at most the zoom's cap of features
// (4,096: clusters of a 64 x 64 grid, each with its count), decoded by
// @mapbox/vector-tile; a z14 tile of the same area is still parcels.
func TestRecordsTileCapped(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey)
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	x, y := tileOf(-76.61, 39.30, 10)
	// The tile holds its parcels and those of its 64-unit buffer.
	var inTile, withBuffer int
	if err := pool.QueryRow(context.Background(), `WITH b AS (SELECT ST_TileEnvelope(10, $1, $2) AS env)
		SELECT count(*) FILTER (WHERE ST_Intersects(ST_Transform(geom, 3857), b.env)),
		       count(*) FILTER (WHERE ST_Intersects(ST_Transform(geom, 3857), ST_Expand(b.env, (ST_XMax(b.env) - ST_XMin(b.env)) * 64 / 4096)))
		FROM rm_parcels.parcels, b`, x, y).Scan(&inTile, &withBuffer); err != nil {
		t.Fatal(err)
	}
	if inTile <= 4096 {
		t.Fatalf("the z10 tile holds %d parcels: not a tile past its cap", inTile)
	}
	st, body := get(t, fmt.Sprintf("%s/api/v1/tiles/10/%d/%d.mvt", e.records, x, y), nil)
	if st != 200 {
		t.Fatalf("z10 tile: %d %s", st, body)
	}
	layer := decodeTile(t, body, 10, x, y)["parcels"]
	counted := 0
	for _, f := range layer.Features {
		n, ok := f.Properties["count"].(float64)
		if f.Properties["cluster"] != true || !ok || n < 1 || f.Type != 1 {
			t.Fatalf("a z10 feature that is not a cluster: %+v", f)
		}
		counted += int(n)
	}
	if len(layer.Features) > 4096 || counted < inTile || counted > withBuffer {
		t.Fatalf("z10 tile of %d parcels: %d features (cap 4096) counting %d parcels, %d bytes", inTile, len(layer.Features), counted, len(body))
	}
	x, y = tileOf(-76.65104057, 39.30941765, 14)
	if st, body = get(t, fmt.Sprintf("%s/api/v1/tiles/14/%d/%d.mvt", e.records, x, y), nil); st != 200 {
		t.Fatalf("z14 tile: %d", st)
	}
	for _, f := range decodeTile(t, body, 14, x, y)["parcels"].Features {
		if f.Properties["apn"] == nil || f.Properties["cluster"] != nil {
			t.Fatalf("a z14 feature that is not a parcel: %+v", f)
		}
	}
}
