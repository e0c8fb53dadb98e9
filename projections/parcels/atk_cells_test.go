package parcels_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/arr-dev/arr/projections/parcels"
)

// atkRows are n synthetic parcels on a grid from (lat0, lon0), step
// degrees apart, 100 a row.
func atkRows(prefix string, n int, lat0, lon0, step float64) []string {
	var rows []string
	for i := range n {
		rows = append(rows, fmt.Sprintf("%s-%05d,%d SYNTHETIC ST,%.6f,%.6f,2026-03-15,1.00", prefix, i, i+1, lat0+float64(i/100)*step, lon0+float64(i%100)*step))
	}
	return rows
}

// atkParked counts the parcels projection's parked events (not cleared).
func atkParked(t *testing.T, e *tileEnv) (int, string) {
	t.Helper()
	var n int
	var errs string
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*), coalesce(string_agg(error, ' | '), '') FROM public.projection_parked
		WHERE projection = $1 AND cleared_at IS NULL`, parcels.Name).Scan(&n, &errs); err != nil {
		t.Fatal(err)
	}
	return n, errs
}

// TestAtkCellsTwoLoadsInOneBatch: two loads that complete in one batch
// (the projection behind the log: two layers loaded back to back) are
// both published. The cells' work table load_cells is ON COMMIT DROP but
// is not in the "dropping the last load's work tables" list, so the
// second completeLoad of the transaction fails with "relation load_cells
// already exists"; the batch is retried, then applied event by event and
// the second load's completion is parked: its parcels never appear.
func TestAtkCellsTwoLoadsInOneBatch(t *testing.T) {
	e := newTileEnv(t)
	ctx := context.Background()
	e.appendLoad("99999", "vacant", "2026-06-01", atkRows("A", 200, 39.10, -76.75, 0.001))
	last := e.appendLoad("99999", "tax_sale", "2026-06-02", atkRows("B", 200, 39.20, -76.75, 0.001))
	if _, _, err := e.runner.Step(ctx, parcels.Name); err != nil {
		t.Errorf("one batch of two completed loads: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := e.runner.WaitFor(wctx, parcels.Name, last); err != nil {
		t.Fatal(err)
	}
	var published, loads int
	if err := e.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM rm_parcels.parcels WHERE apn LIKE 'B-%'),
		(SELECT count(*) FROM rm_parcels.loads WHERE status = 'completed')`).Scan(&published, &loads); err != nil {
		t.Fatal(err)
	}
	n, errs := atkParked(t, e)
	if published != 200 || loads != 2 || n != 0 {
		t.Fatalf("after two loads in one batch: %d of the second load's 200 parcels, %d completed loads of 2, %d parked events: %s", published, loads, n, errs)
	}
}

// TestAtkCellsRebuildKeepsEveryLoad: a rebuild (what Setup runs when the
// DDL hash changed, as this very feature's tile_cells DDL does on
// upgrade) replays the log in batches of up to 20,000 events, so every
// load after the first of a batch fails on load_cells and is parked: the
// rebuilt read model holds only the first load.
func TestAtkCellsRebuildKeepsEveryLoad(t *testing.T) {
	e := newTileEnv(t)
	ctx := context.Background()
	e.load("vacant", "2026-06-01", atkRows("A", 200, 39.10, -76.75, 0.001))
	e.load("tax_sale", "2026-06-02", atkRows("B", 200, 39.20, -76.75, 0.001))
	e.loadIn("99998", "code_violation", "2026-06-03", atkRows("C", 200, 39.30, -76.75, 0.001))
	count := func() (int, int) {
		var parcelsN, cells int
		if err := e.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM rm_parcels.parcels), (SELECT count(DISTINCT county) FROM rm_parcels.tile_cells)`).Scan(&parcelsN, &cells); err != nil {
			t.Fatal(err)
		}
		return parcelsN, cells
	}
	before, beforeCells := count()
	if before != 600 || beforeCells != 2 {
		t.Fatalf("before the rebuild: %d parcels, cells of %d counties", before, beforeCells)
	}
	if err := e.runner.Rebuild(ctx, parcels.Name, nil); err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	after, afterCells := count()
	n, errs := atkParked(t, e)
	if after != before || afterCells != beforeCells || n != 0 {
		t.Fatalf("after the rebuild: %d parcels (before %d), cells of %d counties (before %d), %d parked events: %s", after, before, afterCells, beforeCells, n, errs)
	}
}

// TestAtkCellsAntimeridianParcel: a parcel at lon 180 (accepted by the
// layer reader, which takes -180..180) is in tile x = 2^z - 1's envelope
// (its east edge) and in that tile's clusters as the parcels make them,
// but the cells put it at gx = 2^17, a tile x = 2^z that does not exist:
// at zoom 10 and 11 it is in no tile at all. Same at the south Mercator
// edge (y = -half, gy = 2^17).
func TestAtkCellsAntimeridianParcel(t *testing.T) {
	e := newTileEnv(t)
	ctx := context.Background()
	// 4,500 parcels just west of the antimeridian (past a z10/z11 tile's
	// cap), and one on it.
	rows := atkRows("E", 4500, 0.01, 179.86, 0.0013)
	rows = append(rows, "E-EDGE,1 EDGE ST,0.030000,180.000000,2026-03-15,1.00")
	e.load("vacant", "2026-06-01", rows)
	q := parcels.NewQueries(e.pool)
	var outside int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM rm_parcels.tile_cells WHERE tx >= (1 << z) OR ty >= (1 << z)`).Scan(&outside); err != nil {
		t.Fatal(err)
	}
	if outside != 0 {
		t.Errorf("%d tile cells of tiles outside the zoom's 2^z x 2^z tiles", outside)
	}
	for _, z := range parcels.CellZooms() {
		x, y := 1<<z-1, 1<<(z-1)-1
		got, err := q.TileClusters(ctx, z, x, y, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := q.TileClustersFromParcels(ctx, z, x, y, nil)
		if err != nil {
			t.Fatal(err)
		}
		sum := func(b []byte) (n int) {
			for _, f := range decodeMVT(t, b, parcels.TileLayer) {
				c, _ := f["count"].(float64)
				n += int(c)
			}
			return n
		}
		if g, w := sum(got.Tile), sum(want.Tile); g != w || w != 4501 {
			t.Errorf("tile %d/%d/%d: the cells' clusters count %d parcels, the parcels' %d (of 4501)", z, x, y, g, w)
		}
	}
}
