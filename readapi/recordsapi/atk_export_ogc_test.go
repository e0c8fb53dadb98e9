package recordsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/layerfile"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/readapi/app"
)

// atkParcels is a database with the parcels projection set up, and
// load, which loads a layer naming apns in county 99999 and waits until
// the read model has it.
func atkParcels(t *testing.T) (*pgxpool.Pool, func(layer string, apns ...string)) {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	ctx := context.Background()
	store, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	runner, err := projections.NewRunner(pool, store, projections.Config{}, parcels.Projection{})
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	return pool, func(layer string, apns ...string) {
		t.Helper()
		var b strings.Builder
		b.WriteString("apn,address,lat,lon,date,amount\n")
		for i, apn := range apns {
			fmt.Fprintf(&b, "%s,%d SYNTHETIC ST,40.06,-100.2%d,2026-01-15,1.00\n", apn, i+1, i)
		}
		path := filepath.Join(t.TempDir(), layer+".csv")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := layerfile.Open(path, layerfile.Options{County: "99999"})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		h, err := commands.NewLoadLayerHandler(store, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		lr, err := h.Handle(ctx, commands.LoadLayer{Layer: records.Layer(layer), Counties: []string{"99999"}, SourceURL: "https://example.org/" + layer,
			SourceDate: "2026-06-01", File: layer + ".csv"}, src)
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := runner.WaitFor(wctx, parcels.Name, lr.Position); err != nil {
			t.Fatal(err)
		}
	}
}

// ogcOn is the OGC API over the real read model f.
func ogcOn(t *testing.T, f app.Features) *gin.Engine {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	mem := &memFeatures{}
	e, o := ogcEngine(t, "http://127.0.0.1:1", mem)
	o.features, o.extents = f, newExtentCache(f, nil)
	return e
}

// TestAtkOGCQueryableParamOfNULIs400: a queryable given as a query
// parameter (address=, apn=, ...) is bound as text unchecked: a NUL or
// invalid UTF-8, which the filter= lexer refuses, reaches PostgreSQL,
// which refuses the bind (22021) and the public, key-less route answers
// 500. It should be 400 naming the parameter (or no feature), never a
// query PostgreSQL cannot take.
func TestAtkOGCQueryableParamOfNULIs400(t *testing.T) {
	pool, load := atkParcels(t)
	load("vacant", "A1", "A2")
	e := ogcOn(t, parcels.NewQueries(pool))
	if code, body := get(t, e, "/api/v1/ogc/collections/vacant/items?address=1%20SYNTHETIC%20ST", ""); code != http.StatusOK {
		t.Fatalf("a plain address: %d %s", code, body)
	}
	for _, q := range []string{"address=%00", "address=A%FFB", "apn=%C3%28", "county=99999%00"} {
		for _, col := range []string{"vacant", "parcels"} {
			code, body := get(t, e, "/api/v1/ogc/collections/"+col+"/items?"+q, "")
			if code >= 500 {
				t.Errorf("%s/items?%s: %d %s; want 400 naming the parameter", col, q, code, body)
			}
		}
	}
}

// TestAtkOGCNumberMatchedBelowNumberReturned: after a load completes, the
// next unfiltered page returns the new features but says numberMatched
// from the extents' cache, still the old count (stale while refreshed):
// a page whose numberMatched is less than its own numberReturned, with
// no next link. A client (GDAL's Feature Count) is told the collection
// is smaller than the page it was just given.
func TestAtkOGCNumberMatchedBelowNumberReturned(t *testing.T) {
	pool, load := atkParcels(t)
	load("vacant", "A1", "A2", "A3")
	e := ogcOn(t, parcels.NewQueries(pool))
	page := func() (matched, returned int) {
		t.Helper()
		code, body := get(t, e, "/api/v1/ogc/collections/vacant/items?limit=100", "")
		var fc struct{ NumberMatched, NumberReturned int }
		if err := json.Unmarshal([]byte(body), &fc); code != http.StatusOK || err != nil {
			t.Fatalf("items: %d %s %v", code, body, err)
		}
		return fc.NumberMatched, fc.NumberReturned
	}
	if m, r := page(); m != 3 || r != 3 {
		t.Fatalf("before the load: numberMatched %d numberReturned %d, want 3 and 3", m, r)
	}
	load("vacant", "A1", "A2", "A3", "A4", "A5")
	if m, r := page(); m < r {
		t.Fatalf("after a load: numberMatched %d, numberReturned %d on the only page: the count is of the read model before the load", m, r)
	}
}

// exportServerOn is the export route over the real read model on pool,
// for county 99999; the principal is the request's X-Atk-Key and
// X-Atk-Account (what KeyAuth would set).
func exportServerOn(t *testing.T, pool *pgxpool.Pool) *httptest.Server {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	s := &server{parcels: parcels.NewQueries(pool), gaz: &records.Gazetteer{Counties: []records.County{{FIPS: "99999"}}},
		exports: newExportGate(exportSlots)}
	e := gin.New()
	e.Use(statementTimeout())
	e.GET("/api/v1/exports/parcels", func(c *gin.Context) {
		c.Set(principalKeyForTest, identity.Principal{KeyID: uuid.MustParse(c.GetHeader("X-Atk-Key")), AccountID: uuid.MustParse(c.GetHeader("X-Atk-Account"))})
	}, handle(s.exportParcels))
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv
}

// principalKeyForTest is httpx's context key of the principal.
const principalKeyForTest = "arr.principal"

// TestAtkOneAccountTakesEveryExportSlot: the export gate counts keys, not
// accounts. An account that mints a second key runs two exports at once,
// every slot of the process: each may then hold its slot, a connection
// and a snapshot for the whole 10-minute limit (a client reading a
// little every 30 s), and every other account is refused 429
// exports_busy meanwhile, again and again. The bound "one export per
// key" should bound what one account can take: its second key's export
// should be refused like its first key's second.
func TestAtkOneAccountTakesEveryExportSlot(t *testing.T) {
	pool, load := atkParcels(t)
	load("vacant", "A1", "A2", "A3")
	srv := exportServerOn(t, pool)
	bg := context.Background()
	// Hold the exports where they start: in their snapshot's first read.
	lock, err := pool.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(bg) //nolint:errcheck
	if _, err := lock.Exec(bg, `LOCK TABLE rm_parcels.parcels IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	waiting := func() int {
		var n int
		if err := pool.QueryRow(bg, `SELECT count(*) FROM pg_locks WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND relation = 'rm_parcels.parcels'::regclass`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	type answer struct {
		status int
		body   string
	}
	send := func(key, account uuid.UUID) chan answer {
		out := make(chan answer, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/exports/parcels?county=99999&format=csv", nil)
			req.Header.Set("X-Atk-Key", key.String())
			req.Header.Set("X-Atk-Account", account.String())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				out <- answer{0, err.Error()}
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			out <- answer{resp.StatusCode, string(b)}
		}()
		return out
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
	alice := uuid.New()
	first := send(uuid.New(), alice)
	until("alice's first export waits in its snapshot", func() bool { return waiting() == 1 })
	second := send(uuid.New(), alice) // alice's second key
	var refused *answer
	until("alice's second export is refused or admitted", func() bool {
		select {
		case a := <-second:
			refused = &a
			return true
		default:
			return waiting() == 2
		}
	})
	bob := send(uuid.New(), uuid.New())
	var bobs answer
	if refused == nil {
		bobs = <-bob // alice holds both slots: bob is refused at once
	}
	if err := lock.Rollback(bg); err != nil {
		t.Fatal(err)
	}
	<-first
	if refused == nil {
		<-second
		t.Fatalf("one account ran two exports at once with two keys, every slot of the process; another account meanwhile: %d %s", bobs.status, strings.TrimSpace(bobs.body))
	}
	if refused.status != http.StatusTooManyRequests {
		t.Fatalf("alice's second key: %d %s", refused.status, refused.body)
	}
	<-bob
}

// TestAtkOGCBBoxOfTheAdvertisedExtentIs400: an OGC client (QGIS, GDAL's
// OAPIF driver with a spatial filter, the OGC conformance suite) sends
// the bbox of its view or of the collection's advertised extent. The
// items route refuses any bbox wider or taller than 2 degrees with 400
// bbox_too_large, though the same collection pages whole without a
// bbox: a view a little larger than the data, a state-wide view, the
// world, or the extent /collections/{id} itself advertises once the data
// spans more than 2 degrees (the demo data, Baltimore to Florida), is
// refused. The limit of /api/v1/parcels should not apply
// to the OGC bbox, which pages like every items request.
func TestAtkOGCBBoxOfTheAdvertisedExtentIs400(t *testing.T) {
	pool, load := atkParcels(t)
	load("vacant", "A1", "A2", "A3")
	e := ogcOn(t, parcels.NewQueries(pool))
	code, body := get(t, e, "/api/v1/ogc/collections/parcels", "")
	var col struct {
		Extent struct {
			Spatial struct{ BBox [][4]float64 } `json:"spatial"`
		} `json:"extent"`
	}
	if err := json.Unmarshal([]byte(body), &col); code != http.StatusOK || err != nil || len(col.Extent.Spatial.BBox) != 1 {
		t.Fatalf("collection: %d %s %v", code, body, err)
	}
	b := col.Extent.Spatial.BBox[0]
	for _, bbox := range []string{
		fmt.Sprintf("%v,%v,%v,%v", b[0]-1.5, b[1]-1.5, b[2]+1.5, b[3]+1.5), // a view around the data, 3 degrees wide
		"-79.5,37.9,-75.0,39.8", // Maryland
		"-180,-90,180,90",       // the world, as a zoomed-out client sends
	} {
		code, body := get(t, e, "/api/v1/ogc/collections/parcels/items?bbox="+bbox, "")
		if code != http.StatusOK {
			t.Errorf("bbox=%s: %d %s; want 200 with the features inside it", bbox, code, body)
		}
	}
}
