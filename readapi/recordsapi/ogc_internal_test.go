package recordsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/recordsapi/cursor"
)

// memFeatures is a read model of the OGC API in memory, for what these
// tests check above it: the links, the extents' cache and the turns (the
// queries themselves are tested against PostgreSQL in projections/parcels
// and cmd/arr). Its version is set by the test; each Extents call waits
// for release when it is set. Safe for concurrent use.
type memFeatures struct {
	mu      sync.Mutex
	version parcels.ReadModelVersion
	count   int64
	release chan struct{}
	scans   atomic.Int32
	running atomic.Int32
	limit   atomic.Int64 // the last scan's statement timeout
	queried chan parcels.FeatureQuery
}

func (m *memFeatures) Features(ctx context.Context, q parcels.FeatureQuery) ([]parcels.Feature, error) {
	if m.queried != nil {
		m.queried <- q
	}
	var out []parcels.Feature
	for i := range min(q.Limit, 3) {
		out = append(out, parcels.Feature{ParcelKey: parcels.ParcelKey{County: "24510", APN: string(rune('A' + i))}, Properties: json.RawMessage(`{}`)})
	}
	return out, nil
}

func (m *memFeatures) Extents(ctx context.Context) (map[string]parcels.Extent, error) {
	m.scans.Add(1)
	m.running.Add(1)
	defer m.running.Add(-1)
	m.mu.Lock()
	n, release := m.count, m.release
	m.mu.Unlock()
	d, ok := projections.StatementTimeoutOf(ctx)
	if !ok {
		return nil, context.DeadlineExceeded // every scan runs under a statement timeout
	}
	m.limit.Store(int64(d))
	if release != nil {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return map[string]parcels.Extent{"parcels": {Features: n}}, nil
}

func (m *memFeatures) ExtentsVersion(ctx context.Context) (parcels.ReadModelVersion, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.version, nil
}

func (m *memFeatures) set(v int64, count int64, release chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.version, m.count, m.release = parcels.ReadModelVersion{Schema: 1, Position: v}, count, release
}

// ogcEngine is the OGC API over f, its links on base.
func ogcEngine(t *testing.T, base string, f *memFeatures) (*gin.Engine, *ogcAPI) {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	site, err := httpx.NewSite(base)
	if err != nil {
		t.Fatal(err)
	}
	codec, err := cursor.New(bytes.Repeat([]byte{7}, cursor.MinKeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{d: httpx.Deps{Site: site}, cursors: codec}
	e := gin.New()
	e.Use(statementTimeout())
	o, err := s.newOGC(f, doc)
	if err != nil {
		t.Fatal(err)
	}
	o.mount(e.Group("/api/v1"))
	return e, o
}

func get(t *testing.T, e http.Handler, target, host string) (int, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	if host != "" {
		r.Host = host
	}
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// TestOGCLinksIgnoreHost: every link of the OGC API starts with the
// service's public base URL, whatever Host the request names.
func TestOGCLinksIgnoreHost(t *testing.T) {
	f := &memFeatures{}
	f.set(1, 3, nil)
	e, _ := ogcEngine(t, "https://records.arr.example/base", f)
	for _, path := range []string{"", "/collections", "/collections/parcels", "/collections/parcels/queryables",
		"/collections/parcels/items?limit=2", "/collections/parcels/items/24510-A"} {
		code, body := get(t, e, "/api/v1/ogc"+path, "evil.example:8080")
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		if strings.Contains(body, "evil") {
			t.Errorf("%s answers links to the request's Host: %s", path, body)
		}
		if !strings.Contains(body, `"https://records.arr.example/base/api/v1/ogc`) {
			t.Errorf("%s has no link on the public base URL: %s", path, body)
		}
	}
	code, body := get(t, e, "/api/v1/ogc/collections/parcels/items?limit=2", "evil.example")
	if code != http.StatusOK || !strings.Contains(body, `"rel":"next"`) || strings.Count(body, "https://records.arr.example/base/api/v1/ogc/collections/parcels/items?") != 2 {
		t.Fatalf("a page's self and next links are not on the public base URL: %s", body)
	}
}

// TestOGCExtentsServeStaleWhileRefreshing: one scan refreshes the extents
// for every request at once, and while it runs the collections are
// served the last extents known (a page, its numberMatched only once it
// is of the version now); a new version of the read model (a load, a
// rebuild) refreshes them.
func TestOGCExtentsServeStaleWhileRefreshing(t *testing.T) {
	f := &memFeatures{}
	f.set(1, 3, nil)
	e, _ := ogcEngine(t, "http://127.0.0.1:1", f)
	count := func() int64 {
		t.Helper()
		code, body := get(t, e, "/api/v1/ogc/collections/parcels/items?limit=1", "")
		var fc struct{ NumberMatched int64 }
		if err := json.Unmarshal([]byte(body), &fc); code != http.StatusOK || err != nil {
			t.Fatalf("items: %d %s %v", code, body, err)
		}
		return fc.NumberMatched
	}
	if n := count(); n != 3 {
		t.Fatalf("numberMatched %d, want 3", n)
	}
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	// A cache that waits for the scan would wait forever: the scan ends
	// after 3 s at the latest, and the test fails on the time it took.
	defer time.AfterFunc(3*time.Second, open).Stop()
	f.set(2, 5, release)
	start := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if code, body := get(t, e, "/api/v1/ogc/collections", ""); code != http.StatusOK {
				t.Errorf("collections during a refresh: %d %s", code, body)
			}
		})
	}
	wg.Wait()
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the collections waited %s for the extents' scan", d)
	}
	// The count known is of the version before: a page (not the whole
	// collection) leaves numberMatched out rather than say it.
	if n := count(); n != 0 {
		t.Fatalf("numberMatched %d during the refresh, want it left out (the last known is of the version before)", n)
	}
	// The refresh runs detached from the requests it served stale, so
	// its scan may begin just after they are answered.
	for wait := time.Now().Add(5 * time.Second); f.scans.Load() < 2 && time.Now().Before(wait); {
		time.Sleep(5 * time.Millisecond)
	}
	if s := f.scans.Load(); s != 2 {
		t.Fatalf("%d scans, want 2 (one per version, shared by the requests)", s)
	}
	open()
	deadline := time.Now().Add(5 * time.Second)
	for count() != 5 {
		if time.Now().After(deadline) {
			t.Fatal("the refreshed extents were never served")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOGCExtentsFirstScanSlow: while the first scan of the extents runs
// (a read model too large to scan in a route's 10 s), the collections
// are answered without their extent and a page without numberMatched,
// never 503; the scan goes on apart from the requests, under its own
// statement timeout, longer than the routes', and its extents are served
// once it ends.
func TestOGCExtentsFirstScanSlow(t *testing.T) {
	f := &memFeatures{}
	release := make(chan struct{})
	f.set(1, 7, release)
	e, _ := ogcEngine(t, "http://127.0.0.1:1", f)
	code, body := get(t, e, "/api/v1/ogc/collections/parcels", "")
	if code != http.StatusOK || strings.Contains(body, `"extent"`) {
		t.Fatalf("a collection while the first scan runs: %d %s; want 200 without an extent", code, body)
	}
	code, body = get(t, e, "/api/v1/ogc/collections/parcels/items?limit=1", "")
	if code != http.StatusOK || strings.Contains(body, "numberMatched") {
		t.Fatalf("a page while the first scan runs: %d %s; want 200 without numberMatched", code, body)
	}
	if s := f.scans.Load(); s != 1 {
		t.Fatalf("%d scans, want the one, shared", s)
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, body := get(t, e, "/api/v1/ogc/collections/parcels/items?limit=1", ""); strings.Contains(body, `"numberMatched":7`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first scan's extents were never served")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d := time.Duration(f.limit.Load()); d != extentsScanTimeout || d <= statementTimeouts["GET /api/v1/ogc/collections"] {
		t.Fatalf("the scan ran under a statement timeout of %s, want %s, more than the route's", d, extentsScanTimeout)
	}
}

// TestOGCDatetimeTakesAFilteredTurn: a datetime without a filter is
// bounded like a filter: it queries in a turn of the filtered queries.
func TestOGCDatetimeTakesAFilteredTurn(t *testing.T) {
	f := &memFeatures{}
	f.set(1, 3, nil)
	e, o := ogcEngine(t, "http://127.0.0.1:1", f)
	for range cap(o.filtered.slots) {
		o.filtered.slots <- struct{}{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/api/v1/ogc/collections/vacant/items?datetime=2025-11-01/2025-11-30", nil)
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "query_timeout") {
		t.Fatalf("datetime with every filtered turn taken: %d %s; want 503 query_timeout (it waits for a turn)", w.Code, w.Body.String())
	}
	if code, body := get(t, e, "/api/v1/ogc/collections/vacant/items", ""); code != http.StatusOK {
		t.Fatalf("unfiltered: %d %s", code, body)
	}
}

// TestOGCParamsOutOfRange: a datetime, a queryable parameter or a bbox the
// read model cannot take is 400 with a message, never a query.
func TestOGCParamsOutOfRange(t *testing.T) {
	f := &memFeatures{queried: make(chan parcels.FeatureQuery, 10)}
	f.set(1, 3, nil)
	e, _ := ogcEngine(t, "http://127.0.0.1:1", f)
	for _, c := range []struct{ name, query, code string }{
		{"datetime of year 0", "datetime=0000-12-31", "invalid_datetime"},
		{"datetime of year 10000 in UTC", "datetime=9999-12-31T23:00:00-05:00", "invalid_datetime"},
		{"interval end of year 10000 in UTC", "datetime=2020-01-01/9999-12-31T23:00:00-05:00", "invalid_datetime"},
		{"date queryable of year 0", "record_date=0000-01-01", "invalid_record_date"},
		{"instant queryable of year 10000 in UTC", "first_seen=9999-12-31T23:00:00-05:00", "invalid_first_seen"},
		{"filter of year 0", "filter=record_date%3DDATE('0000-01-01')", "invalid_filter"},
		{"like ending in the escape", "filter=address%20LIKE%20'abc%5C'", "invalid_filter"},
		{"bbox of five numbers", "bbox=1,2,3,4,5", "bbox_arity"},
	} {
		code, body := get(t, e, "/api/v1/ogc/collections/vacant/items?"+c.query, "")
		if code != http.StatusBadRequest || !strings.Contains(body, `"code":"`+c.code+`"`) {
			t.Errorf("%s: %d %s; want 400 %s", c.name, code, body, c.code)
		}
	}
	if len(f.queried) != 0 {
		t.Fatalf("%d refused requests queried", len(f.queried))
	}
	for _, c := range []struct{ name, query string }{
		{"bbox across the antimeridian", "bbox=179.5,51,-179.5,52"},
		{"bbox in 3D", "bbox=-76.7,39.2,0,-76.5,39.3,100"},
	} {
		code, body := get(t, e, "/api/v1/ogc/collections/vacant/items?"+c.query, "")
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", c.name, code, body)
		}
		if q := <-f.queried; q.BBox == nil {
			t.Fatalf("%s: queried without the bbox", c.name)
		}
	}
}
