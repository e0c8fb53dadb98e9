package parcels_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/arr-dev/arr/projections/parcels"
)

// TestClusterTilesFromCells: the cluster tiles of the zooms with cells
// (read from the cells the loads made) hold the clusters the tile's
// parcels make at request time, cell for cell (count, layers, position
// to a unit), filtered by layers or not, after each of: a first load, a
// load of another layer naming some of the parcels, a load of the first
// layer that no longer names most of them, and a load of another county
// beside the first (whose cells stay); and after a rebuild that replays
// them all in one transaction.
func TestClusterTilesFromCells(t *testing.T) {
	e := newTileEnv(t)
	ctx := context.Background()
	q := parcels.NewQueries(e.pool)
	// 22,500 parcels in a 0.15 x 0.15 degree square across tile borders
	// of zooms 10 to 12: a z12 tile of it is past its cap of 16,384.
	row := func(i int, lat0, lon0 float64) string {
		return fmt.Sprintf("SYN-%05d,%d SYNTHETIC ST,%.6f,%.6f,2026-03-15,1.00", i, i+1, lat0+float64(i/150)*0.001+0.0000013*float64(i%7), lon0+float64(i%150)*0.001+0.0000017*float64(i%11))
	}
	var rows, some []string
	for i := range 150 * 150 {
		rows = append(rows, row(i, 39.10, -76.75))
		if i%3 == 0 {
			some = append(some, rows[i])
		}
	}
	layerSets := [][]string{nil, {"tax_sale"}, {"vacant"}, {"tax_sale", "vacant"}, {"code_violation"}}
	check := func(stage string) {
		t.Helper()
		compared := 0
		for _, z := range parcels.CellZooms() {
			x0, y0 := tileOf(-76.75, 39.25, z)
			x1, y1 := tileOf(-76.60, 39.10, z)
			for x := x0; x <= x1; x++ {
				for y := y0; y <= y1; y++ {
					for _, ls := range layerSets {
						got, err := q.TileClusters(ctx, z, x, y, ls)
						if err != nil {
							t.Fatalf("%s: cells' tile %d/%d/%d %v: %v", stage, z, x, y, ls, err)
						}
						want, err := q.TileClustersFromParcels(ctx, z, x, y, ls)
						if err != nil {
							t.Fatalf("%s: parcels' tile %d/%d/%d %v: %v", stage, z, x, y, ls, err)
						}
						if got.Version != want.Version {
							t.Fatalf("%s: tile %d/%d/%d: version %+v, the parcels' %+v", stage, z, x, y, got.Version, want.Version)
						}
						sameClusters(t, fmt.Sprintf("%s: tile %d/%d/%d %v", stage, z, x, y, ls), got.Tile, want.Tile)
						if len(want.Tile) > 0 {
							compared++
						}
					}
				}
			}
		}
		if compared < 10 {
			t.Fatalf("%s: %d tiles of clusters compared; the data should make more", stage, compared)
		}
	}
	e.load("vacant", "2026-06-01", rows)
	check("first load")
	e.load("tax_sale", "2026-06-02", some)
	check("a second layer")
	e.load("vacant", "2026-06-03", rows[:5000])
	check("the first layer dropping parcels")
	var other []string
	for i := range 3000 {
		other = append(other, row(i, 39.15, -76.70))
	}
	e.loadIn("99998", "code_violation", "2026-06-04", other)
	check("another county")
	// A rebuild replays the four loads in one transaction into a new
	// schema: the same cells.
	if err := e.runner.Rebuild(ctx, parcels.Name, nil); err != nil {
		t.Fatal(err)
	}
	var parked int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM projection_parked`).Scan(&parked); err != nil || parked != 0 {
		t.Fatalf("the rebuild parked %d events (%v)", parked, err)
	}
	check("after a rebuild")
	var counties int
	if err := e.pool.QueryRow(ctx, `SELECT count(DISTINCT county) FROM rm_parcels.tile_cells`).Scan(&counties); err != nil || counties != 2 {
		t.Fatalf("tile cells of %d counties (%v); want both", counties, err)
	}
}

// sameClusters fails unless the tiles got and want hold the same
// clusters: the same count and layers at each position, to a unit (their
// means are summed in another order).
func sameClusters(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if len(want) == 0 || len(got) == 0 {
		if len(want) != len(got) {
			t.Fatalf("%s: %d bytes, the parcels' tile %d", what, len(got), len(want))
		}
		return
	}
	g, w := decodeMVT(t, got, parcels.TileLayer), decodeMVT(t, want, parcels.TileLayer)
	order := func(a, b mvtFeature) int {
		return cmp.Or(cmp.Compare(a["_x"].(float64), b["_x"].(float64)), cmp.Compare(a["_y"].(float64), b["_y"].(float64)),
			cmp.Compare(a["count"].(float64), b["count"].(float64)), cmp.Compare(a["layers"].(string), b["layers"].(string)))
	}
	slices.SortFunc(g, order)
	slices.SortFunc(w, order)
	if len(g) != len(w) {
		t.Fatalf("%s: %d clusters, the parcels' tile %d", what, len(g), len(w))
	}
	for i := range g {
		dx, dy := g[i]["_x"].(float64)-w[i]["_x"].(float64), g[i]["_y"].(float64)-w[i]["_y"].(float64)
		if g[i]["count"] != w[i]["count"] || g[i]["layers"] != w[i]["layers"] || g[i]["cluster"] != true || dx*dx > 1 || dy*dy > 1 {
			t.Fatalf("%s: cluster %d is %v, the parcels' %v", what, i, g[i], w[i])
		}
	}
}
