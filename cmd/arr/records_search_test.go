package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// searchPage is a page of GET /api/v1/parcels or POST
// /api/v1/parcels/query.
type searchPage struct {
	Type     string `json:"type"`
	Features []struct {
		ID         string `json:"id"`
		Properties struct {
			County     string   `json:"county"`
			APN        string   `json:"apn"`
			Address    string   `json:"address"`
			DistanceM  *float64 `json:"distance_m"`
			MatchScore *float64 `json:"match_score"`
			Layers     []string `json:"layers"`
		} `json:"properties"`
	} `json:"features"`
	Count      int     `json:"count"`
	NextCursor *string `json:"next_cursor"`
	Error      *struct {
		Code, Field, Message string
	} `json:"error"`
}

func (p searchPage) ids() []string {
	var out []string
	for _, f := range p.Features {
		out = append(out, f.ID)
	}
	return out
}

// postQuery sends POST /api/v1/parcels/query.
func postQuery(t testing.TB, u string, body []byte) (int, searchPage, []byte) {
	t.Helper()
	resp, err := http.Post(u, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var p searchPage
	_ = json.Unmarshal(b, &p)
	return resp.StatusCode, p, b
}

// allPages follows next_cursor from a first page URL (limit small) and
// returns every feature id in order.
func allPages(t testing.TB, first string) []string {
	t.Helper()
	var ids []string
	u := first
	for range 200 {
		var p searchPage
		getJSON(t, u, nil, 200, &p)
		ids = append(ids, p.ids()...)
		if p.NextCursor == nil {
			return ids
		}
		u = first + "&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	t.Fatalf("%s: more than 200 pages", first)
	return nil
}

// TestRecordsSearch searches the shipped Baltimore parcels beyond the bbox:
// near a point with distances, by address (tolerant of abbreviations and
// typos), by APN, inside a polygon; and refuses what is malformed.
func TestRecordsSearch(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_DEMO_DATA=true", "ARR_MASTER_KEY="+testMasterKey)
	e.up()
	pool, _ := openStore(t, e.dbURL)
	waitCaughtUp(t, pool, 90*time.Second)
	api := e.records + "/api/v1"
	// 2041 W NORTH AVE is block 0001 lot 003 of Baltimore City (24510).
	const lon, lat, want = -76.65104057, 39.30941765, "24510:0001 003"

	t.Run("near a point, nearest first, with distances", func(t *testing.T) {
		var p searchPage
		getJSON(t, fmt.Sprintf("%s/parcels?near=%v,%v&radius_m=300&limit=1000", api, lon, lat), nil, 200, &p)
		if len(p.Features) < 5 || p.Features[0].ID != want {
			t.Fatalf("near 2041 W North Ave: %d features, first %v", len(p.Features), p.ids()[:min(3, len(p.Features))])
		}
		last := -1.0
		for _, f := range p.Features {
			d := f.Properties.DistanceM
			if d == nil || *d < last || *d > 300 {
				t.Fatalf("%s: distance_m %v after %v (radius 300)", f.ID, d, last)
			}
			last = *d
		}
		if *p.Features[0].Properties.DistanceM > 1 {
			t.Fatalf("the parcel at the point is %v m away", *p.Features[0].Properties.DistanceM)
		}
		// Paging by cursor gives the same parcels in the same order.
		paged := allPages(t, fmt.Sprintf("%s/parcels?near=%v,%v&radius_m=300&limit=7", api, lon, lat))
		if !slices.Equal(paged, p.ids()) {
			t.Fatalf("paged %d features, one page %d; first difference in %v", len(paged), len(p.ids()), paged[:min(10, len(paged))])
		}
		// A smaller radius keeps a prefix.
		var small searchPage
		getJSON(t, fmt.Sprintf("%s/parcels?near=%v,%v&radius_m=100&limit=1000", api, lon, lat), nil, 200, &small)
		if len(small.Features) == 0 || len(small.Features) >= len(p.Features) || !slices.Equal(small.ids(), p.ids()[:len(small.Features)]) {
			t.Fatalf("radius 100: %d features, not a prefix of radius 300's %d", len(small.Features), len(p.Features))
		}
	})

	t.Run("by address, tolerant of abbreviations and typos", func(t *testing.T) {
		for _, q := range []string{"2041 W North", "2041 West North Avenue", "2041 w. north ave", "2041 W Nroth Ave"} {
			var p searchPage
			getJSON(t, api+"/parcels?address="+url.QueryEscape(q), nil, 200, &p)
			if len(p.Features) == 0 || p.Features[0].ID != want || p.Features[0].Properties.Address != "2041 W NORTH AVE" {
				t.Fatalf("address %q: first %v", q, p.ids()[:min(3, len(p.Features))])
			}
			s := p.Features[0].Properties.MatchScore
			if s == nil || *s <= 0 || *s > 1 {
				t.Fatalf("address %q: match_score %v", q, s)
			}
			for i := 1; i < len(p.Features); i++ {
				if *p.Features[i].Properties.MatchScore > *p.Features[i-1].Properties.MatchScore {
					t.Fatalf("address %q: not best match first at %d", q, i)
				}
			}
		}
		paged := allPages(t, api+"/parcels?address="+url.QueryEscape("W North Ave")+"&limit=9")
		var one searchPage
		getJSON(t, api+"/parcels?address="+url.QueryEscape("W North Ave")+"&limit=1000", nil, 200, &one)
		if len(paged) < 10 || !slices.Equal(paged, one.ids()) {
			t.Fatalf("address pages: %d features against one page's %d", len(paged), len(one.ids()))
		}
		var none searchPage
		getJSON(t, api+"/parcels?address="+url.QueryEscape("99999 Nowhere Parkway Zzyzx"), nil, 200, &none)
		if len(none.Features) != 0 {
			t.Fatalf("an address nowhere matched %v", none.ids())
		}
	})

	t.Run("by APN, in a county or any", func(t *testing.T) {
		for _, q := range []string{"apn=0001%20003", "apn=0001-003", "apn=0001003&county=24510"} {
			var p searchPage
			getJSON(t, api+"/parcels?"+q, nil, 200, &p)
			if !slices.Equal(p.ids(), []string{want}) {
				t.Fatalf("%s: %v", q, p.ids())
			}
		}
		var other searchPage
		getJSON(t, api+"/parcels?apn=0001-003&county=24005", nil, 200, &other)
		if len(other.Features) != 0 {
			t.Fatalf("APN in another county: %v", other.ids())
		}
	})

	t.Run("inside a polygon, like a bbox", func(t *testing.T) {
		w, s, e2, n := lon-0.002, lat-0.002, lon+0.002, lat+0.002
		poly := fmt.Sprintf(`{"geometry":{"type":"Polygon","coordinates":[[[%v,%v],[%v,%v],[%v,%v],[%v,%v],[%v,%v]]]},"limit":1000}`,
			w, s, e2, s, e2, n, w, n, w, s)
		status, p, body := postQuery(t, api+"/parcels/query", []byte(poly))
		if status != 200 || !slices.Contains(p.ids(), want) {
			t.Fatalf("polygon: %d %s", status, body[:min(300, len(body))])
		}
		var box searchPage
		getJSON(t, fmt.Sprintf("%s/parcels?bbox=%v,%v,%v,%v&limit=1000", api, w, s, e2, n), nil, 200, &box)
		if !slices.Equal(p.ids(), box.ids()) {
			t.Fatalf("the square polygon found %d parcels, the same bbox %d", len(p.ids()), len(box.ids()))
		}
		// A triangle holds fewer, all of them in the box.
		tri := fmt.Sprintf(`{"geometry":{"type":"Polygon","coordinates":[[[%v,%v],[%v,%v],[%v,%v],[%v,%v]]]},"layers":["vacant"],"limit":1000}`, w, s, e2, s, w, n, w, s)
		status, tp, body := postQuery(t, api+"/parcels/query", []byte(tri))
		if status != 200 || len(tp.Features) == 0 || len(tp.Features) >= len(p.Features) {
			t.Fatalf("triangle with layers=vacant: %d, %d features of the square's %d: %s", status, len(tp.Features), len(p.Features), body[:min(200, len(body))])
		}
		for _, f := range tp.Features {
			if !slices.Contains(box.ids(), f.ID) || !slices.Contains(f.Properties.Layers, "vacant") {
				t.Fatalf("triangle feature %s outside the box or not vacant: %v", f.ID, f.Properties.Layers)
			}
		}
	})

	t.Run("vector tiles that @mapbox/vector-tile decodes", func(t *testing.T) {
		testTiles(t, e, api, lon, lat)
	})

	t.Run("the map page in Chromium", func(t *testing.T) {
		testMapPage(t, e, lon, lat)
	})

	t.Run("malformed searches get 400 naming the field", func(t *testing.T) {
		for _, c := range []struct{ query, code, field string }{
			{"", "bbox_required", "bbox"},
			{"bbox=-76.7,39.2,-76.5,39.3&near=-76.6,39.3&radius_m=10", "search_conflict", "near"},
			{"address=2041%20W%20North&apn=0001-003", "search_conflict", "apn"},
			{"near=-76.6,39.3", "radius_required", "radius_m"},
			{"near=-76.6,39.3&radius_m=5001", "invalid_radius_m", "radius_m"},
			{"near=-76.6,39.3&radius_m=0", "invalid_radius_m", "radius_m"},
			{"near=-76.6,39.3&radius_m=NaN", "invalid_radius_m", "radius_m"},
			{"near=NaN,39.3&radius_m=10", "near_not_a_number", "near"},
			{"near=-76.6&radius_m=10", "near_arity", "near"},
			{"near=-276.6,39.3&radius_m=10", "near_out_of_range", "near"},
			{"bbox=-76.7,39.2,-76.5,39.3&radius_m=10", "radius_without_near", "radius_m"},
			{"bbox=-76.7,39.2,-76.5,39.3&county=24510", "county_without_apn", "county"},
			{"address=--%20%23", "address_too_short", "address"},
			{"address=" + strings.Repeat("x", 201), "invalid_address", "address"},
			{"apn=---", "invalid_apn", "apn"},
			{"apn=1&county=245", "invalid_county", "county"},
			{"near=-76.6,39.3&radius_m=10&cursor=AQ", "invalid_cursor", "cursor"},
		} {
			var p searchPage
			getJSON(t, api+"/parcels?"+c.query, nil, 400, &p)
			if p.Error == nil || p.Error.Code != c.code || p.Error.Field != c.field || p.Error.Message == "" {
				t.Errorf("%s: got %+v, want %s on %s", c.query, p.Error, c.code, c.field)
			}
		}
		// A cursor of one search does not continue another.
		var first searchPage
		getJSON(t, fmt.Sprintf("%s/parcels?near=%v,%v&radius_m=300&limit=2", api, lon, lat), nil, 200, &first)
		var p searchPage
		getJSON(t, fmt.Sprintf("%s/parcels?near=%v,%v&radius_m=301&limit=2&cursor=%s", api, lon, lat, url.QueryEscape(*first.NextCursor)), nil, 400, &p)
		if p.Error == nil || p.Error.Code != "invalid_cursor" {
			t.Fatalf("another radius's cursor: %+v", p.Error)
		}
		getJSON(t, fmt.Sprintf("%s/parcels?bbox=-76.7,39.2,-76.5,39.3&cursor=%s", api, url.QueryEscape(*first.NextCursor)), nil, 400, &p)
		if p.Error == nil || p.Error.Code != "invalid_cursor" {
			t.Fatalf("a nearby search's cursor on a bbox search: %+v", p.Error)
		}
	})

	t.Run("malformed polygons get 400 naming the geometry", func(t *testing.T) {
		ring := func(pts ...[2]float64) string {
			var b []string
			for _, p := range pts {
				b = append(b, fmt.Sprintf("[%v,%v]", p[0], p[1]))
			}
			return `{"geometry":{"type":"Polygon","coordinates":[[` + strings.Join(b, ",") + `]]}}`
		}
		a, b, c, d := [2]float64{lon, lat}, [2]float64{lon + 0.01, lat}, [2]float64{lon + 0.01, lat + 0.01}, [2]float64{lon, lat + 0.01}
		var many []string
		for i := range 1001 {
			many = append(many, fmt.Sprintf("[%v,%v]", lon+0.001*float64(i%2), lat+0.00001*float64(i)))
		}
		for _, tc := range []struct{ name, body, code, field string }{
			{"not JSON", `{"geometry":`, "invalid_json", ""},
			{"an unknown field", `{"geometry":null,"bbox":[1,2,3,4]}`, "invalid_json", ""},
			{"two objects", ring(a, b, c, a) + `{}`, "invalid_json", ""},
			{"no geometry", `{}`, "geometry_required", "geometry"},
			{"a point", `{"geometry":{"type":"Point","coordinates":[1,2]}}`, "invalid_geometry", "geometry"},
			{"a line string type", `{"geometry":{"type":"LineString","coordinates":[[[1,2],[2,3],[3,3],[1,2]]]}}`, "geometry_not_polygon", "geometry"},
			{"not closed", ring(a, b, c, d), "invalid_geometry", "geometry"},
			{"three positions", ring(a, b, a), "invalid_geometry", "geometry"},
			{"self-intersecting", ring(a, c, b, d, a), "invalid_geometry", "geometry"},
			{"out of range", ring([2]float64{-200, 39}, [2]float64{-199, 39}, [2]float64{-199, 40}, [2]float64{-200, 39}), "geometry_out_of_range", "geometry"},
			{"3 degrees wide", ring(a, [2]float64{lon + 3, lat}, [2]float64{lon + 3, lat + 0.1}, a), "geometry_too_large", "geometry"},
			{"1,001 positions", `{"geometry":{"type":"Polygon","coordinates":[[` + strings.Join(many, ",") + `]]}}`, "geometry_too_complex", "geometry"},
			{"a string coordinate", `{"geometry":{"type":"Polygon","coordinates":[[["1",2],[2,3],[3,3],["1",2]]]}}`, "invalid_geometry", "geometry"},
			{"an unknown layer", strings.TrimSuffix(ring(a, b, c, a), "}") + `,"layers":["haunted"]}`, "unknown_layer", "layers"},
			{"limit 0", strings.TrimSuffix(ring(a, b, c, a), "}") + `,"limit":0}`, "invalid_limit", "limit"},
		} {
			status, p, body := postQuery(t, api+"/parcels/query", []byte(tc.body))
			if status != 400 || p.Error == nil || p.Error.Code != tc.code || p.Error.Field != tc.field || p.Error.Message == "" {
				t.Errorf("%s: %d %s, want 400 %s on %q", tc.name, status, body[:min(300, len(body))], tc.code, tc.field)
			}
		}
		big := `{"geometry":null,"pad":"` + strings.Repeat("x", 200<<10) + `"}`
		if status, _, body := postQuery(t, api+"/parcels/query", []byte(big)); status != 413 {
			t.Fatalf("a 200 KB body: %d %s", status, body[:min(200, len(body))])
		}
	})
}

// tileOf is the Web Mercator tile x, y at zoom z holding lon, lat.
func tileOf(lon, lat float64, z int) (int, int) {
	n := math.Exp2(float64(z))
	x := int((lon + 180) / 360 * n)
	r := lat * math.Pi / 180
	y := int((1 - math.Log(math.Tan(r)+1/math.Cos(r))/math.Pi) / 2 * n)
	return x, y
}

// decodedTile is scripts/clients/vector-tile/decode.mjs's output.
type decodedTile map[string]struct {
	Extent   int `json:"extent"`
	Features []struct {
		Type       int            `json:"type"`
		Properties map[string]any `json:"properties"`
		GeoJSON    struct {
			Type        string    `json:"type"`
			Coordinates []float64 `json:"coordinates"`
		} `json:"geojson"`
	} `json:"features"`
}

// decodeTile decodes an MVT with @mapbox/vector-tile (the npm package;
// scripts/test.sh installs it).
func decodeTile(t *testing.T, body []byte, z, x, y int) decodedTile {
	t.Helper()
	dir, _ := filepath.Abs("../../scripts/clients/vector-tile")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@mapbox", "vector-tile", "package.json")); err != nil {
		t.Fatalf("the @mapbox/vector-tile npm package is not installed in %s: run scripts/test.sh (or npm ci there)", dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "decode.mjs", strconv.Itoa(z), strconv.Itoa(x), strconv.Itoa(y))
	cmd.Dir, cmd.Stdin = dir, bytes.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("decoding the tile: %v %s", err, stderr)
	}
	var d decodedTile
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("decode.mjs output: %v", err)
	}
	return d
}

func testTiles(t *testing.T, e *env, api string, lon, lat float64) {
	const z = 14
	x, y := tileOf(lon, lat, z)
	u := fmt.Sprintf("%s/tiles/%d/%d/%d.mvt", api, z, x, y)
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/vnd.mapbox-vector-tile" || etag == "" ||
		resp.Header.Get("Cache-Control") != "public, max-age=60" {
		t.Fatalf("tile %d/%d/%d: %d %v", z, x, y, resp.StatusCode, resp.Header)
	}
	d := decodeTile(t, body, z, x, y)
	layer, ok := d["parcels"]
	if !ok || len(d) != 1 || layer.Extent != 4096 || len(layer.Features) < 10 {
		t.Fatalf("tile layers %d, parcels extent %d with %d features", len(d), layer.Extent, len(layer.Features))
	}
	var score float64
	found := false
	for _, f := range layer.Features {
		p := f.Properties
		if f.Type != 1 || p["county"] == nil || p["apn"] == nil || p["score"] == nil {
			t.Fatalf("a feature without its point, county, apn or score: %+v", f)
		}
		if p["apn"] == "0001 003" && p["county"] == "24510" {
			found, score = true, p["score"].(float64)
			c := f.GeoJSON.Coordinates
			if f.GeoJSON.Type != "Point" || math.Abs(c[0]-lon) > 1e-4 || math.Abs(c[1]-lat) > 1e-4 || !strings.Contains(p["layers"].(string), "vacant") {
				t.Fatalf("2041 W North Ave in the tile: %+v", f)
			}
		}
	}
	if !found {
		t.Fatalf("tile %d/%d/%d lacks 2041 W North Ave", z, x, y)
	}
	// The tile's score is the signal report's.
	e.createAccount("tiles@example.com", "free")
	key := e.mint("tiles@example.com", "records")
	var r signalReport
	getJSON(t, api+"/signals/"+url.PathEscape("0001 003")+"?county=24510", map[string]string{"X-API-Key": key.Secret}, 200, &r)
	if r.Motivation.Total != score || score <= 0 {
		t.Fatalf("tile score %v, signal report %v", score, r.Motivation.Total)
	}
	// Unchanged: 304 for its ETag.
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("If-None-Match", "W/"+etag)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 304 || resp.Header.Get("ETag") != etag {
		t.Fatalf("If-None-Match %s: %d", etag, resp.StatusCode)
	}
	// A layers filter keeps only what those layers name.
	resp, err = http.Get(u + "?layers=vacant")
	if err != nil {
		t.Fatal(err)
	}
	vbody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("layers=vacant: %d", resp.StatusCode)
	}
	vac := decodeTile(t, vbody, z, x, y)["parcels"]
	if len(vac.Features) == 0 || len(vac.Features) > len(layer.Features) {
		t.Fatalf("layers=vacant: %d features of %d", len(vac.Features), len(layer.Features))
	}
	for _, f := range vac.Features {
		if !strings.Contains(f.Properties["layers"].(string), "vacant") {
			t.Fatalf("layers=vacant holds %+v", f.Properties)
		}
	}
	// An empty tile (the open Atlantic) is 204.
	ox, oy := tileOf(-60, 30, z)
	if st, b := get(t, fmt.Sprintf("%s/tiles/%d/%d/%d.mvt", api, z, ox, oy), nil); st != 204 || len(b) != 0 {
		t.Fatalf("an empty tile: %d, %d bytes", st, len(b))
	}
	for _, c := range []struct{ path, code, field string }{
		{"/tiles/9/146/195.mvt", "zoom_too_low", "z"},
		{"/tiles/23/0/0.mvt", "invalid_tile", "z"},
		{"/tiles/14/16384/0.mvt", "invalid_tile", "x"},
		{"/tiles/14/0/-1.mvt", "invalid_tile", "y"},
		{"/tiles/14/0/0.png", "invalid_tile", "y"},
		{"/tiles/14/01/0.mvt", "invalid_tile", "x"},
		{"/tiles/14/0/0.mvt?layers=haunted", "unknown_layer", "layers"},
		{"/tiles/14/0/0.mvt?weights=1999-01", "unknown_weights_version", "weights"},
	} {
		var p searchPage
		getJSON(t, api+c.path, nil, 400, &p)
		if p.Error == nil || p.Error.Code != c.code || p.Error.Field != c.field {
			t.Errorf("%s: %+v, want %s on %s", c.path, p.Error, c.code, c.field)
		}
	}
}

// testMapPage opens /map in headless Chromium (WebGL in software), waits
// for parcels drawn from the tiles, saves a screenshot, and clicks 2041 W
// North Ave for its signal report. Nothing is fetched off loopback.
func testMapPage(t *testing.T, e *env, lon, lat float64) {
	resp, err := http.Get(e.records + "/map")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") ||
		!strings.Contains(string(page), "maplibre-gl-csp.js") {
		t.Fatalf("/map: %d, CSP %q", resp.StatusCode, csp)
	}
	if st, _ := get(t, e.records+"/map?zoom=99", nil); st != 400 {
		t.Fatalf("/map?zoom=99: %d", st)
	}
	if st, b := get(t, e.records+"/map/assets/maplibre-gl-csp-worker.js", nil); st != 200 || len(b) < 100000 {
		t.Fatalf("the worker: %d, %d bytes", st, len(b))
	}
	if st, _ := get(t, e.records+"/map/assets/..%2f..%2fgo.mod", nil); st != 404 {
		t.Fatalf("a path outside the assets: %d", st)
	}
	ctx, outside := newBrowser(t, chromedp.Flag("enable-unsafe-swiftshader", true), chromedp.Flag("use-angle", "swiftshader"),
		chromedp.Flag("ignore-gpu-blocklist", true), chromedp.WindowSize(1000, 800))
	u := fmt.Sprintf("%s/map?lon=%v&lat=%v&zoom=16", e.records, lon, lat)
	if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
		t.Fatal(err)
	}
	drawn, err := chromedp.Run(ctx, chromedp.Poll[int](`window.arrMap && arrMap.loaded() && arrMap.queryRenderedFeatures({layers: ['parcels']}).length`,
		chromedp.WithPollingTimeout(90*time.Second), chromedp.WithPollingInterval(250*time.Millisecond)))
	if err != nil {
		webgl, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.createElement('canvas').getContext('webgl2')`))
		t.Fatalf("no parcels drawn on the map (WebGL 2: %v): %v", webgl, err)
	}
	if drawn < 5 {
		t.Fatalf("%d parcels drawn", drawn)
	}
	screenshot(t, ctx, artifactDir(t), "map.png")
	// Click 2041 W North Ave: its popup is its signal report.
	pt, err := chromedp.Run(ctx, chromedp.Evaluate[struct{ X, Y float64 }](fmt.Sprintf(`arrMap.project([%v, %v])`, lon, lat)))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(pt.X, pt.Y)); err != nil {
		t.Fatal(err)
	}
	popup, err := chromedp.Run(ctx, chromedp.Poll[string](`(document.querySelector('.maplibregl-popup-content .report') || {}).textContent || ''`,
		chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatalf("no signal report after a click at %v: %v", pt, err)
	}
	for _, want := range []string{"2041 W NORTH AVE", "APN 0001 003", "county 24510", "Motivation score", "vacant", "2019-10-01"} {
		if !strings.Contains(popup, want) {
			t.Fatalf("the report lacks %q: %s", want, popup)
		}
	}
	screenshot(t, ctx, artifactDir(t), "map-report.png")
	select {
	case u := <-outside:
		t.Fatalf("the map page fetched %s, off this machine", u)
	default:
	}
}
