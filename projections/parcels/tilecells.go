package parcels

import (
	"fmt"
	"math/bits"
	"strings"
)

// The clusters of the low zooms are made by the loads, not by the tiles:
// a zoom 10 tile of a dense county holds half a million parcels, and
// gathering them on its grid at request time took longer than a tile's
// statement timeout under a map's load. Each load rewrites the cells of
// its counties (the parcels of a county change only in a load), in its
// transaction, so a cluster tile reads at most its grid's cells of one
// version of the read model, whatever the number of parcels under it.

// CellZooms are the zooms whose cluster tiles are read from the cells the
// loads made (tile_cells); a cluster tile of a higher zoom covers at most
// a sixteenth of a zoom 10 tile and is gathered from its parcels (cells
// for zoom 12 would be about half as many as the parcels: 1.5 s more for
// a load of a million).
func CellZooms() []int { return []int{10, 11} }

// cellRules names, in the DDL, the zooms and grids of the cells the read
// model holds: a change of them changes the DDL's hash, and the runner
// rebuilds the read model with the cells of the new zooms (a zoom added
// without would read cells no load made: empty tiles).
func cellRules() string {
	var zs []string
	for _, z := range CellZooms() {
		zs = append(zs, fmt.Sprintf("%d (grid %d)", z, tileCap(z).Grid))
	}
	return "\n-- tile cells of zooms " + strings.Join(zs, ", ") + "\n"
}

// hasCells reports whether zoom z's cluster tiles are read from tile_cells.
func hasCells(z int) bool {
	for _, c := range CellZooms() {
		if c == z {
			return true
		}
	}
	return false
}

// cellLevel is the zoom of the tiles that are zoom z's cells: the grid of
// a tile of zoom z (a power of two) splits it into tiles of z + log2(grid).
func cellLevel(z int) int { return z + bits.TrailingZeros(uint(tileCap(z).Grid)) }

// webMercatorHalf is half the side of the Web Mercator square (EPSG:3857),
// in metres: what ST_TileEnvelope divides into 2^z x 2^z tiles.
const webMercatorHalf = "20037508.342789244"

// tileCellsDDL is the cells' table: per county, zoom, tile, cell of the
// tile's grid (cx, cy from the top left, 0 to grid - 1) and set of layers
// (a cluster tile filtered by layers keeps the cells of the sets naming
// any of them), the parcels' count and the sums of their Web Mercator
// coordinates (a cluster is at its parcels' mean).
const tileCellsDDL = `
CREATE TABLE tile_cells (
    county text     COLLATE "C" NOT NULL,
    z      smallint NOT NULL,
    tx     integer  NOT NULL,
    ty     integer  NOT NULL,
    cx     integer  NOT NULL,
    cy     integer  NOT NULL,
    layers text[]   NOT NULL,
    count  integer  NOT NULL,
    sx     double precision NOT NULL,
    sy     double precision NOT NULL
);
`

// tileCellsDeferredDDL is the cells' indexes: a cluster tile reads its
// own, a load deletes its counties'.
const tileCellsDeferredDDL = `
CREATE INDEX tile_cells_tile ON tile_cells (z, tx, ty);
CREATE INDEX tile_cells_county ON tile_cells (county);
`

// cellStatements are the statements of a load's publishing that make the
// cells of the counties it changed (its own and those of the parcels it
// wrote), after the parcels are written: the old cells deleted, the cells
// of the finest cell level gathered from the parcels once (into a work
// table), and each zoom's from those (a cell of a coarser level is the
// union of the finer cells whose coordinates, halved, are its own: exact,
// the levels' cells being nested). A parcel on the world's east or south
// edge (lon 180, or Y at the square's bottom) is in the last tile, whose
// edge it is on, as a tile of parcels finds it (the grid's cells are
// half-open: the edge would start a tile that does not exist).
func cellStatements(counties []string) []statement {
	zooms := CellZooms()
	finest := 0
	for _, z := range zooms {
		finest = max(finest, cellLevel(z))
	}
	const changed = `(SELECT unnest($1::text[]) UNION SELECT county FROM load_parcels)`
	out := []statement{
		{"deleting the changed counties' tile cells", `DELETE FROM tile_cells WHERE county IN ` + changed, []any{counties}},
		{"gathering the changed counties' parcels into cells", fmt.Sprintf(`
CREATE TEMP TABLE load_cells ON COMMIT DROP AS
SELECT p.county, least(floor((ST_X(p.geom_mercator) + %[1]s) / c.w)::bigint, c.last) AS gx, least(floor((%[1]s - ST_Y(p.geom_mercator)) / c.w)::bigint, c.last) AS gy,
    p.layers, count(*)::int AS count, sum(ST_X(p.geom_mercator)) AS sx, sum(ST_Y(p.geom_mercator)) AS sy
FROM parcels p, (SELECT 2 * %[1]s / 2 ^ %[2]d AS w, (2 ^ %[2]d)::bigint - 1 AS last) c
WHERE p.county IN %[3]s AND p.geom_mercator && ST_MakeEnvelope(-%[1]s, -%[1]s, %[1]s, %[1]s, 3857)
GROUP BY 1, 2, 3, 4`, webMercatorHalf, finest, changed), []any{counties}},
	}
	var zs []string
	for _, z := range zooms {
		zs = append(zs, fmt.Sprint(z))
		shift, grid := finest-cellLevel(z), tileCap(z).Grid
		out = append(out, statement{fmt.Sprintf("making zoom %d's tile cells", z), fmt.Sprintf(`
INSERT INTO tile_cells (county, z, tx, ty, cx, cy, layers, count, sx, sy)
SELECT county, %[1]d, (gx >> %[2]d) / %[3]d, (gy >> %[2]d) / %[3]d, (gx >> %[2]d) %% %[3]d, (gy >> %[2]d) %% %[3]d, layers, sum(count), sum(sx), sum(sy)
FROM load_cells GROUP BY county, gx >> %[2]d, gy >> %[2]d, layers`, z, shift, grid), nil})
	}
	out[len(out)-1].what += " (zooms " + strings.Join(zs, ", ") + ")"
	return out
}

// tileCellsClustersSQL is a cluster tile of a zoom with cells (%[1]s:
// the layers filter, bound, on the cells' sets): the tile's cells, merged
// across counties and sets of layers (clustersSQL).
const tileCellsClustersSQL = `WITH b AS (SELECT ST_TileEnvelope($1, $2, $3) AS env),
c AS (SELECT p.cx, p.cy, p.layers, p.count, p.sx, p.sy FROM rm_parcels.tile_cells p WHERE p.z = $1 AND p.tx = $2 AND p.ty = $3%[1]s),` + clustersSQL
