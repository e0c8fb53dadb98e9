package parcels_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/layerfile"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/eventstore/postgres"
	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/parcels"
)

// TestBulkFillKeepsTheIndexes: the first load into the empty tables drops
// their secondary indexes and builds them again in its transaction, so
// afterwards the tables have the indexes they had (same definitions),
// valid; a second load (into tables that hold rows: the upsert path)
// leaves them as they are too, and its parcels are merged with the
// first's.
func TestBulkFillKeepsTheIndexes(t *testing.T) {
	pool, _ := migratetest.NewPool(t)
	ctx := context.Background()
	store, err := postgres.New(pool, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := projections.NewRunner(pool, store, projections.Config{}, parcels.Projection{})
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	before := indexDefs(t, pool)
	if !strings.Contains(before, "parcels_geom ") || !strings.Contains(before, "parcel_layers_lender ") {
		t.Fatalf("the read model's indexes before any load:\n%s", before)
	}
	loads := []struct{ layer, rows string }{
		{"vacant", "SYN-1,1 SYNTHETIC ST,40.06,-100.21,2026-01-15,1.00\nSYN-2,2 SYNTHETIC ST,40.07,-100.22,2026-01-15,2.00\n"},
		{"tax_delinquent", "SYN-2,2 SYNTHETIC ST,40.07,-100.22,2026-02-15,3.00\nSYN-3,3 SYNTHETIC ST,40.08,-100.23,2026-02-15,4.00\n"},
	}
	for i, l := range loads {
		loadCSV(t, runner, store, l.layer, "apn,address,lat,lon,date,amount\n"+l.rows)
		if after := indexDefs(t, pool); after != before {
			t.Fatalf("after load %d the indexes are\n%s\nwant\n%s", i+1, after, before)
		}
	}
	var layers string
	if err := pool.QueryRow(ctx, `SELECT string_agg(apn || ':' || array_to_string(layers, '+'), ' ' ORDER BY apn) FROM rm_parcels.parcels`).Scan(&layers); err != nil {
		t.Fatal(err)
	}
	if layers != "SYN-1:vacant SYN-2:tax_delinquent+vacant SYN-3:tax_delinquent" {
		t.Fatalf("parcels' layers: %s", layers)
	}
}

// indexDefs lists the parcels read model's indexes of parcels and
// parcel_layers, valid ones only, one definition a line.
func indexDefs(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	var defs string
	if err := pool.QueryRow(context.Background(), `SELECT string_agg(pg_get_indexdef(i.indexrelid), E'\n' ORDER BY c.relname)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE i.indrelid IN ('rm_parcels.parcels'::regclass, 'rm_parcels.parcel_layers'::regclass) AND i.indisvalid`).Scan(&defs); err != nil {
		t.Fatal(err)
	}
	return defs
}

// loadCSV loads a layer file of county 99999 and waits for the parcels
// projection to apply it.
func loadCSV(t testing.TB, runner *projections.Runner, store *postgres.Store, layer, body string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), layer+".csv")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
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
	lr, err := h.Handle(ctx, commands.LoadLayer{Layer: records.Layer(layer), Counties: []string{"99999"}, SourceURL: "https://example.org/synthetic",
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
