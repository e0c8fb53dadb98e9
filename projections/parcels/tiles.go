package parcels

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/arr-dev/arr/domain/records"
)

// TileLayer is the name of a parcels vector tile's one layer.
const TileLayer = "parcels"

// TileCap is how many features a tile of a zoom may hold, and the grid
// its parcels are gathered on when they are more: MaxFeatures is
// Grid x Grid. Published per zoom in the OpenAPI document.
type TileCap struct {
	MinZoom     int
	Grid        int
	MaxFeatures int
}

// TileCaps are the tiles' caps, by the least zoom each applies from:
// from zoom 10 a tile shows at most 4,096 features (a 64 x 64 grid of
// 64-unit cells), from zoom 12 at most 16,384 (128 x 128, 32-unit
// cells). A tile whose parcels are more than its cap holds clusters
// instead: one point per non-empty cell, at the mean of its parcels,
// with the properties cluster (true), count (its parcels) and layers
// (the keys naming any of them, comma-separated); no apn, county or
// score.
func TileCaps() []TileCap {
	return []TileCap{{MinZoom: 10, Grid: 64, MaxFeatures: 64 * 64}, {MinZoom: 12, Grid: 128, MaxFeatures: 128 * 128}}
}

// MaxTileBytes bounds a tile's size: a tile of parcels that would be
// larger is made of clusters (whose size the grid bounds) instead.
const MaxTileBytes = 2 << 20

// tileCap is the cap of zoom z.
func tileCap(z int) TileCap {
	caps := TileCaps()
	c := caps[0]
	for _, k := range caps {
		if z >= k.MinZoom {
			c = k
		}
	}
	return c
}

// TileResult is a tile made (or found to be clusters) by TilePoints or
// TileClusters: its bytes (nil when it holds nothing, or when TilePoints
// found it is to be clusters), the read model's version it was made at
// (read by the statement that made it), and whether it is made of
// clusters. A tile whose parcels are more than its zoom's cap (OverCap)
// is clusters whatever the weights and the date: they are in none of its
// bytes. One of clusters only because its parcels' tile was larger than
// MaxTileBytes is not OverCap (another weights table could make a tile
// of parcels small enough).
type TileResult struct {
	Tile     []byte
	Version  ReadModelVersion
	Clusters bool
	OverCap  bool
}

// Tile returns the Mapbox vector tile z/x/y (Web Mercator, 4096 units, a
// 64-unit buffer) of the parcels named by any of layers (every parcel
// when empty): TilePoints, then TileClusters when the tile is to be
// clusters.
func (q *Queries) Tile(ctx context.Context, z, x, y int, layers []string, w records.WeightTable, asOf time.Time) (TileResult, error) {
	r, err := q.TilePoints(ctx, z, x, y, layers, w, asOf)
	if err != nil || !r.Clusters {
		return r, err
	}
	c, err := q.TileClusters(ctx, z, x, y, layers)
	c.OverCap = r.OverCap
	return c, err
}

// TilePoints makes tile z/x/y of its parcels, each a point with the
// properties apn, county, layers (the keys naming it, comma-separated)
// and score (its motivation score with the weights table w as of asOf,
// as the signal report computes it: the sum over the layers naming it of
// weight x recency factor, in hundredths exact); Tile is nil when the
// tile holds no parcel. A tile of more parcels than its zoom's cap
// (TileCaps; counted before any score is computed), or of more than
// MaxTileBytes, is to be clusters instead: TilePoints then says so
// (Clusters, with OverCap for the first) and makes nothing. It is the
// cheap step: it counts at most the cap's parcels before it gives up.
func (q *Queries) TilePoints(ctx context.Context, z, x, y int, layers []string, w records.WeightTable, asOf time.Time) (TileResult, error) {
	c := tileCap(z)
	keys := make([]string, 0, len(w.Weights))
	for l := range w.Weights {
		keys = append(keys, string(l))
	}
	sort.Strings(keys)
	weights := make([]int32, len(keys))
	for i, k := range keys {
		weights[i] = int32(w.Weights[records.Layer(k)])
	}
	maxAge, factor := make([]int32, len(w.Recency)), make([]int32, len(w.Recency))
	for i, b := range w.Recency {
		maxAge[i], factor[i] = int32(b.MaxAgeDays), int32(b.FactorPermille)
	}
	args := []any{z, x, y, keys, weights, maxAge, factor, asOf.UTC().Format(time.DateOnly), c.MaxFeatures}
	var r TileResult
	if err := q.pool.QueryRow(ctx, fmt.Sprintf(tilePointsSQL, layersFilter(&args, layers)), args...).Scan(&r.Version.Schema, &r.Version.Position, &r.OverCap, &r.Tile); err != nil {
		return TileResult{}, fmt.Errorf("parcels tile %d/%d/%d: %w", z, x, y, err)
	}
	r.Clusters = r.OverCap || len(r.Tile) > MaxTileBytes
	if r.Clusters || len(r.Tile) == 0 {
		r.Tile = nil
	}
	return r, nil
}

// TileClusters makes tile z/x/y of clusters on its zoom's grid (TileCaps):
// one point per non-empty cell, at the mean of its parcels, with the
// properties cluster (true), count (its parcels) and layers (the keys
// naming any of them, comma-separated); no apn, county or score, so it
// depends on neither weights nor a date. A tile of a zoom with cells
// (CellZooms) reads the cells the loads made; one of a higher zoom reads
// every parcel of the tile.
func (q *Queries) TileClusters(ctx context.Context, z, x, y int, layers []string) (TileResult, error) {
	args, sql := []any{z, x, y}, tileCellsClustersSQL
	if !hasCells(z) {
		args, sql = append(args, 4096/tileCap(z).Grid), tileClustersSQL
	}
	r := TileResult{Clusters: true}
	if err := q.pool.QueryRow(ctx, fmt.Sprintf(sql, layersFilter(&args, layers)), args...).Scan(&r.Version.Schema, &r.Version.Position, &r.Tile); err != nil {
		return TileResult{}, fmt.Errorf("parcels cluster tile %d/%d/%d: %w", z, x, y, err)
	}
	if len(r.Tile) == 0 {
		r.Tile = nil
	}
	return r, nil
}

// layersFilter binds layers (none: no filter) after args and returns the
// condition on p that names it.
func layersFilter(args *[]any, layers []string) string {
	if len(layers) == 0 {
		return ""
	}
	*args = append(*args, layers)
	return fmt.Sprintf(` AND p.layers && $%d::text[]`, len(*args))
}

// versionSQL reads the read model's version (ReadModelVersion) in the
// statement that reads it: the schema's OID and its loads' largest
// position.
const versionSQL = `(SELECT 'rm_parcels'::regnamespace::oid), (SELECT coalesce(max(position), 0) FROM rm_parcels.loads)`

// tilePointsSQL is a tile of parcels' one statement (%[1]s: the layers
// filter, bound). n: whether the tile's parcels are more than $9 (it
// counts at most $9 + 1 of them). With at most $9, t: each parcel with
// its score: for each layer naming it (layers and layer_dates, side by
// side), its newest date's age in days as of $8 picks the first recency
// band that holds it; weight x factor / 10 is the term in hundredths of a
// point, as records.Motivation computes it. It reads parcels alone,
// through the columns a load made for tiles (geom_mercator, generated
// from geom, and layer_dates, written with the row: layerDatesSQL), with
// no join and no per-parcel JSON.
const tilePointsSQL = `WITH b AS (SELECT ST_TileEnvelope($1, $2, $3) AS env),
n AS (SELECT count(*) AS n FROM (SELECT 1 FROM rm_parcels.parcels p, b WHERE p.geom_mercator && b.env%[1]s LIMIT $9::int + 1) c),
t AS (
  SELECT ST_AsMVTGeom(p.geom_mercator, b.env, 4096, 64, true) AS geom, p.apn, p.county, array_to_string(p.layers, ',') AS layers,
         (coalesce((SELECT sum(lw.weight * (SELECT bf.f FROM unnest($6::int[], $7::int[]) WITH ORDINALITY bf(maxd, f, i)
                                      WHERE bf.maxd = 0 OR greatest(0, $8::date - ld.d) <= bf.maxd ORDER BY bf.i LIMIT 1) / 10)
                    FROM unnest(p.layers, p.layer_dates) ld(layer, d)
                    JOIN unnest($4::text[], $5::int[]) lw(layer, weight) USING (layer)), 0) / 100.0)::float8 AS score
  FROM rm_parcels.parcels p, b WHERE p.geom_mercator && b.env%[1]s
)
SELECT ` + versionSQL + `, (SELECT n FROM n) > $9::int,
       CASE WHEN (SELECT n FROM n) <= $9::int THEN (SELECT ST_AsMVT(t.*, '` + TileLayer + `', 4096, 'geom') FROM t WHERE t.geom IS NOT NULL) END`

// clustersSQL ends a tile of clusters' statement, after b (the tile's
// envelope) and c (per cell, cx and cy, and set of layers: the parcels'
// count and the sums of their Web Mercator coordinates): per cell, one
// point at its parcels' mean, with their count and the keys naming any
// of them (sorted, comma-separated).
const clustersSQL = `
k AS (
  SELECT ST_AsMVTGeom(ST_SetSRID(ST_MakePoint(sum(c.sx) / sum(c.count), sum(c.sy) / sum(c.count)), 3857), b.env, 4096, 64, true) AS geom,
         true AS cluster, sum(c.count)::int AS count,
         coalesce((SELECT string_agg(DISTINCT l, ',' ORDER BY l) FROM unnest(string_to_array(string_agg(array_to_string(c.layers, ','), ','), ',')) l
                   WHERE l <> ''), '') AS layers
  FROM c, b GROUP BY c.cx, c.cy, b.env
)
SELECT ` + versionSQL + `, (SELECT ST_AsMVT(k.*, '` + TileLayer + `', 4096, 'geom') FROM k WHERE k.geom IS NOT NULL)`

// tileClustersSQL is a tile of clusters' one statement (%[1]s: the layers
// filter, bound): the clusters of the $4-unit cells, computed from the
// Mercator coordinates alone (c: per cell and set of layers, then per
// cell), never a parcel's score.
const tileClustersSQL = `WITH b AS (SELECT ST_TileEnvelope($1, $2, $3) AS env),
e AS (SELECT b.env, ST_XMin(b.env) AS x0, ST_YMax(b.env) AS y1, (ST_XMax(b.env) - ST_XMin(b.env)) * $4::int / 4096 AS cell FROM b),
c AS (
  SELECT floor((ST_X(p.geom_mercator) - e.x0) / e.cell)::int AS cx, floor((e.y1 - ST_Y(p.geom_mercator)) / e.cell)::int AS cy, p.layers,
         count(*) AS count, sum(ST_X(p.geom_mercator)) AS sx, sum(ST_Y(p.geom_mercator)) AS sy
  FROM rm_parcels.parcels p, e WHERE p.geom_mercator && e.env%[1]s
  GROUP BY 1, 2, 3
),` + clustersSQL

// TileVersion is the read model's version a tile made now would be made
// at (what TilePoints and TileClusters return beside it): the schema
// holding the read model (a rebuild swaps in another) and its loads'
// largest position.
func (q *Queries) TileVersion(ctx context.Context) (ReadModelVersion, error) {
	var v ReadModelVersion
	if err := q.pool.QueryRow(ctx, `SELECT `+versionSQL).Scan(&v.Schema, &v.Position); err != nil {
		return ReadModelVersion{}, fmt.Errorf("the tiles' version: %w", err)
	}
	return v, nil
}

// Centre is where a map of the parcels opens: the point of the first
// parcel (in county and APN order) that has one, so the view shows real
// parcels wherever the loaded counties lie; false when none has a point.
func (q *Queries) Centre(ctx context.Context) (lon, lat float64, ok bool) {
	err := q.pool.QueryRow(ctx, `SELECT ST_X(geom), ST_Y(geom) FROM rm_parcels.parcels WHERE geom IS NOT NULL ORDER BY county, apn LIMIT 1`).Scan(&lon, &lat)
	return lon, lat, err == nil
}
