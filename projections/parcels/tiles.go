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

// Tile returns the Mapbox vector tile z/x/y (Web Mercator, 4096 units, a
// 64-unit buffer) of the parcels named by any of layers (every parcel when
// empty), each a point with the properties apn, county, layers (the keys
// naming it, comma-separated) and score (its motivation score with the
// weights table w as of asOf, as the signal report computes it: the sum
// over the layers naming it of weight x recency factor, in hundredths
// exact); nil when the tile holds no parcel. It also returns, from the
// same statement, the read model's position the tile was made at: the
// log position of the last completed load (parcels change only when a
// load completes, and a rebuild applies the same positions).
func (q *Queries) Tile(ctx context.Context, z, x, y int, layers []string, w records.WeightTable, asOf time.Time) ([]byte, int64, error) {
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
	args := []any{z, x, y, keys, weights, maxAge, factor, asOf.UTC().Format(time.DateOnly)}
	filter := ""
	if len(layers) > 0 {
		args = append(args, layers)
		filter = fmt.Sprintf(` AND p.layers && $%d::text[]`, len(args))
	}
	// The newest date of each layer naming the parcel (its record's date,
	// else its load's source date), its age in days as of asOf, the first
	// recency band that holds the age; weight x factor / 10 is the term in
	// hundredths of a point, as records.Motivation computes it.
	sql := `WITH b AS (SELECT ST_TileEnvelope($1, $2, $3) AS env),
t AS (
  SELECT ST_AsMVTGeom(ST_Transform(p.geom, 3857), b.env, 4096, 64, true) AS geom, p.apn, p.county,
         array_to_string(p.layers, ',') AS layers,
         (coalesce((SELECT sum(lw.weight * (SELECT bf.f FROM unnest($6::int[], $7::int[]) WITH ORDINALITY bf(maxd, f, i)
                                      WHERE bf.maxd = 0 OR greatest(0, $8::date - l.d) <= bf.maxd ORDER BY bf.i LIMIT 1) / 10)
                    FROM (SELECT s->>'layer' AS layer, max(coalesce((s->>'record_date')::date, (s->>'source_date')::date)) AS d
                          FROM jsonb_array_elements(p.signals) s WHERE s->>'layer' = ANY (p.layers) GROUP BY 1) l
                    JOIN unnest($4::text[], $5::int[]) lw(layer, weight) USING (layer)), 0) / 100.0)::float8 AS score
  FROM rm_parcels.parcels p, b
  WHERE p.geom && ST_Transform(b.env, 4326)` + filter + `
)
SELECT (SELECT max(position) FROM rm_parcels.loads WHERE status = 'completed'),
       (SELECT ST_AsMVT(t.*, '` + TileLayer + `', 4096, 'geom') FROM t WHERE t.geom IS NOT NULL)`
	var pos *int64
	var tile []byte
	if err := q.pool.QueryRow(ctx, sql, args...).Scan(&pos, &tile); err != nil {
		return nil, 0, fmt.Errorf("parcels tile %d/%d/%d: %w", z, x, y, err)
	}
	var p int64
	if pos != nil {
		p = *pos
	}
	if len(tile) == 0 {
		return nil, p, nil
	}
	return tile, p, nil
}

// Centre is where a map of the parcels opens: the point of the first
// parcel (in county and APN order) that has one, so the view shows real
// parcels wherever the loaded counties lie; false when none has a point.
func (q *Queries) Centre(ctx context.Context) (lon, lat float64, ok bool) {
	err := q.pool.QueryRow(ctx, `SELECT ST_X(geom), ST_Y(geom) FROM rm_parcels.parcels WHERE geom IS NOT NULL ORDER BY county, apn LIMIT 1`).Scan(&lon, &lat)
	return lon, lat, err == nil
}
