package parcels_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/layerfile"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/cql2"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections/parcels"
)

// loadCSV loads a layer from a CSV body of county 24510.
func (f *watchFixture) loadCSV(layer, body string) uint64 {
	f.t.Helper()
	csv := filepath.Join(f.dir, "ogc.csv")
	if err := os.WriteFile(csv, []byte(body), 0o600); err != nil {
		f.t.Fatal(err)
	}
	src, err := layerfile.Open(csv, layerfile.Options{County: "24510"})
	if err != nil {
		f.t.Fatal(err)
	}
	defer src.Close()
	h, err := commands.NewLoadLayerHandler(f.store, time.Now)
	if err != nil {
		f.t.Fatal(err)
	}
	lr, err := h.Handle(f.ctx, commands.LoadLayer{Layer: records.Layer(layer), Counties: []string{"24510"}, SourceURL: "https://example.org/" + layer,
		SourceDate: "2026-06-01", File: "ogc.csv"}, src)
	if err != nil {
		f.t.Fatal(err)
	}
	f.wait(lr.Position)
	return lr.Position
}

// features returns the APNs of the features of collection id fq selects.
func (f *watchFixture) features(fq parcels.FeatureQuery) ([]string, []parcels.Feature) {
	f.t.Helper()
	if fq.Limit == 0 {
		fq.Limit = 100
	}
	got, err := parcels.NewQueries(f.pool).Features(f.ctx, fq)
	if err != nil {
		f.t.Fatalf("Features(%+v): %v", fq, err)
	}
	apns := make([]string, len(got))
	for i, g := range got {
		apns[i] = g.APN
	}
	return apns, got
}

// TestOGCFeatureQueries runs the OGC API's feature queries against
// PostgreSQL: a bbox across the antimeridian selects on both sides of it,
// amount_usd compares as its property renders, and the extents' version
// changes with a rebuild.
func TestOGCFeatureQueries(t *testing.T) {
	f := newWatchFixture(t)
	f.loadCSV("tax_sale", "apn,address,lat,lon,date,amount\n"+
		"AM-1,1 A ST,51.5,179.8,2026-01-15,12.345\n"+
		"AM-2,2 A ST,51.5,-179.8,2026-01-15,12.34\n"+
		"AM-3,3 A ST,51.6,179.9,2026-01-15,12.335\n"+
		"AM-4,4 A ST,51.6,10,2026-01-15,12.3449\n"+
		"AM-5,5 A ST,51.6,-170,2026-01-15,1.005\n")
	col := collection(t, "tax_sale")

	t.Run("bbox across the antimeridian", func(t *testing.T) {
		b, err := records.ParseOGCBBox("179.5,51,-179.5,52")
		if err != nil {
			t.Fatal(err)
		}
		apns, _ := f.features(parcels.FeatureQuery{Collection: col, BBox: &b})
		if want := []string{"AM-1", "AM-2", "AM-3"}; !slices.Equal(apns, want) {
			t.Fatalf("bbox 179.5,51,-179.5,52: %v, want %v", apns, want)
		}
	})

	t.Run("amount_usd compares as it renders", func(t *testing.T) {
		_, all := f.features(parcels.FeatureQuery{Collection: col})
		rendered := map[string]json.Number{}
		for _, g := range all {
			var p struct {
				Amount json.Number `json:"amount_usd"`
			}
			if err := json.Unmarshal(g.Properties, &p); err != nil {
				t.Fatal(err)
			}
			rendered[g.APN] = p.Amount
		}
		for _, amount := range []string{"12.34", "12.35", "1.01", "1.00"} {
			e, err := cql2.Parse("amount_usd = "+amount, cql2.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			apns, _ := f.features(parcels.FeatureQuery{Collection: col, Filter: e})
			var want []string
			for _, g := range all {
				if r, _ := rendered[g.APN].Float64(); json.Number(amount) == rendered[g.APN] || r == mustFloat(t, amount) {
					want = append(want, g.APN)
				}
			}
			if !slices.Equal(apns, want) {
				t.Errorf("amount_usd = %s: %v; the features whose amount_usd renders as %s are %v (rendered: %v)", amount, apns, amount, want, rendered)
			}
		}
		if rendered["AM-1"] != "12.35" || rendered["AM-3"] != "12.34" || rendered["AM-5"] != "1.01" {
			t.Fatalf("rendered amounts: %v", rendered)
		}
	})

	t.Run("the extents' version changes with a rebuild", func(t *testing.T) {
		q := parcels.NewQueries(f.pool)
		before, err := q.ExtentsVersion(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.runner.Rebuild(f.ctx, parcels.Name, nil); err != nil {
			t.Fatal(err)
		}
		after, err := q.ExtentsVersion(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after == before {
			t.Fatalf("ExtentsVersion %v before and after a rebuild: the extents cached under it would stay those of the replaced read model", after)
		}
	})
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, ok := records.ParseDecimal(s)
	if !ok {
		t.Fatalf("%q", s)
	}
	return v
}
