package recordsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/layerfile"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
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
