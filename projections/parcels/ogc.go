package parcels

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/cql2"
	"github.com/arr-dev/arr/domain/records"
)

// FeatureQuery is one page of an OGC API items request.
type FeatureQuery struct {
	Collection Collection
	// BBox, when set, keeps the features with coordinates inside it (a
	// box across the antimeridian, West > East, too).
	BBox *records.BBox
	// Filter, when set, keeps the features it holds for.
	Filter cql2.Expr
	// From and To, when set, bound the features' date (both included):
	// a record's record_date, or its source_date when it has none.
	From, To *time.Time
	// Key, when set, asks for that one feature.
	Key *ParcelKey
	// After pages forwards after a feature; Before backwards before one.
	After, Before *ParcelKey
	Limit         int
}

// Feature is a feature of an OGC API collection: its key, its point (nil
// without coordinates) and its properties, a JSON object rendered by
// PostgreSQL.
type Feature struct {
	ParcelKey
	Point      *[2]float64
	Properties json.RawMessage
}

// parcelFeatureSQL and layerFeatureSQL select a feature (its key, point
// and properties) from parcels p, or from parcel_layers pl joined to
// their parcels p (%s: the lender's member, in the layers that have one).
const (
	parcelFeatureSQL = `SELECT p.county, p.apn, ST_X(p.geom), ST_Y(p.geom), json_build_object('county', p.county, 'apn', p.apn, 'address', p.address,
		'source_url', p.source_url, 'layers', to_json(p.layers), 'signals', p.signals)::text
		FROM rm_parcels.parcels p WHERE true`
	layerFeatureSQL = `SELECT pl.county, pl.apn, ST_X(p.geom), ST_Y(p.geom), json_build_object('county', pl.county, 'apn', pl.apn, 'address', pl.address,
		'record_date', to_char(pl.record_date, 'YYYY-MM-DD'), 'source_date', to_char(pl.source_date, 'YYYY-MM-DD'),
		'first_seen', to_char(pl.first_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'last_seen', to_char(pl.last_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
		'last_crawl', to_char(pl.last_crawl AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'source_url', pl.source_url,
		'amount_usd', ` + amountUSDSQL + `, 'record_count', pl.record_count, %s
		'detail', coalesce(pl.detail, '{}'::jsonb))::text
		FROM rm_parcels.parcel_layers pl LEFT JOIN rm_parcels.parcels p ON p.county = pl.county AND p.apn = pl.apn
		WHERE pl.layer = $1 AND pl.named`
)

// Features returns up to q.Limit features of q's collection in (county,
// apn) order (q.Before: the ones just before it, still in that order).
// Every value of the request is a bind parameter; the filter's properties
// are the collection's queryables only (filterSQL).
func (q *Queries) Features(ctx context.Context, fq FeatureQuery) ([]Feature, error) {
	sql, args, err := featureSQL(fq)
	if err != nil {
		return nil, err
	}
	rows, err := q.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("features of %s: %w", fq.Collection.ID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Feature, error) {
		var f Feature
		var lon, lat *float64
		var props string
		err := r.Scan(&f.County, &f.APN, &lon, &lat, &props)
		if lon != nil && lat != nil {
			f.Point = &[2]float64{*lon, *lat}
		}
		f.Properties = json.RawMessage(props)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("features of %s: %w", fq.Collection.ID, err)
	}
	if fq.Before != nil {
		slices.Reverse(out)
	}
	return out, nil
}

// featureSQL writes fq's query and its arguments.
func featureSQL(fq FeatureQuery) (string, []any, error) {
	var sql string
	var args []any
	t, key := "p", "p.county, p.apn"
	if fq.Collection.Layer == "" {
		sql = parcelFeatureSQL
	} else {
		lender := ""
		if _, ok := fq.Collection.Queryable("lender"); ok {
			lender = "'lender', pl.lender,"
		}
		sql, args = fmt.Sprintf(layerFeatureSQL, lender), []any{fq.Collection.Layer}
		t, key = "pl", "pl.county, pl.apn"
	}
	param := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	if fq.BBox != nil {
		// A box across the antimeridian is two (records.BBox.Boxes).
		var boxes []string
		for _, b := range fq.BBox.Boxes() {
			w, s, e, n := param(b.West), param(b.South), param(b.East), param(b.North)
			boxes = append(boxes, fmt.Sprintf(`(p.geom && ST_MakeEnvelope(%[1]s, %[2]s, %[3]s, %[4]s, 4326) AND ST_X(p.geom) BETWEEN %[1]s AND %[3]s AND ST_Y(p.geom) BETWEEN %[2]s AND %[4]s)`, w, s, e, n))
		}
		sql += " AND (" + strings.Join(boxes, " OR ") + ")"
	}
	if fq.Collection.Layer != "" {
		if fq.From != nil {
			sql += ` AND coalesce(pl.record_date, pl.source_date) >= ` + param(fq.From.UTC().Format(time.DateOnly)) + `::date`
		}
		if fq.To != nil {
			sql += ` AND coalesce(pl.record_date, pl.source_date) <= ` + param(fq.To.UTC().Format(time.DateOnly)) + `::date`
		}
	}
	if fq.Filter != nil {
		cond, a, err := filterSQL(fq.Collection, fq.Filter, args)
		if err != nil {
			return "", nil, err
		}
		sql, args = sql+" AND "+cond, a
	}
	order := " ORDER BY " + key
	switch {
	case fq.Key != nil:
		sql += fmt.Sprintf(" AND %s.county = %s AND %s.apn = %s", t, param(fq.Key.County), t, param(fq.Key.APN))
	case fq.After != nil:
		sql += fmt.Sprintf(" AND (%s) > (%s, %s)", key, param(fq.After.County), param(fq.After.APN))
	case fq.Before != nil:
		sql += fmt.Sprintf(" AND (%s) < (%s, %s)", key, param(fq.Before.County), param(fq.Before.APN))
		order = fmt.Sprintf(" ORDER BY %s.county DESC, %s.apn DESC", t, t)
	}
	return sql + order + " LIMIT " + param(fq.Limit), args, nil
}

// Extent is what a collection covers: the box of its features'
// coordinates and the span of their dates (nil when there are none).
type Extent struct {
	BBox     *[4]float64
	From, To *string
	// Features is how many features the collection holds.
	Features int64
}

// Extents returns every collection's extent and size, by collection id,
// computed now (a scan of the read model: callers cache it by
// ExtentsVersion, and run it under a statement timeout).
func (q *Queries) Extents(ctx context.Context) (map[string]Extent, error) {
	rows, err := q.pool.Query(ctx, `
SELECT 'parcels', ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e), NULL, NULL, n FROM (SELECT ST_Extent(geom) e, count(*) n FROM rm_parcels.parcels) x
UNION ALL
SELECT pl.layer, ST_XMin(ST_Extent(p.geom)), ST_YMin(ST_Extent(p.geom)), ST_XMax(ST_Extent(p.geom)), ST_YMax(ST_Extent(p.geom)),
       to_char(min(coalesce(pl.record_date, pl.source_date)), 'YYYY-MM-DD'), to_char(max(coalesce(pl.record_date, pl.source_date)), 'YYYY-MM-DD'), count(*)
FROM rm_parcels.parcel_layers pl LEFT JOIN rm_parcels.parcels p ON p.county = pl.county AND p.apn = pl.apn
WHERE pl.named GROUP BY pl.layer`)
	if err != nil {
		return nil, fmt.Errorf("collection extents: %w", err)
	}
	defer rows.Close()
	out := map[string]Extent{}
	for rows.Next() {
		var id string
		var x0, y0, x1, y1 *float64
		var e Extent
		if err := rows.Scan(&id, &x0, &y0, &x1, &y1, &e.From, &e.To, &e.Features); err != nil {
			return nil, fmt.Errorf("collection extents: %w", err)
		}
		if x0 != nil && y0 != nil && x1 != nil && y1 != nil {
			e.BBox = &[4]float64{*x0, *y0, *x1, *y1}
		}
		out[id] = e
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("collection extents: %w", err)
	}
	return out, nil
}

// ReadModelVersion names a state of the read model: the schema that
// holds it (a rebuild swaps in a new one, so its OID changes) and the
// largest position of its loads (every load that completes or fails moves
// it). Two reads of one version saw the same loads in the same read
// model. Comparable.
type ReadModelVersion struct {
	Schema   uint32
	Position int64
}

// ExtentsVersion returns the version of the read model the extents depend
// on (the loads table is a few rows per load, and this reads its largest
// position and the schema's OID).
func (q *Queries) ExtentsVersion(ctx context.Context) (ReadModelVersion, error) {
	var v ReadModelVersion
	if err := q.pool.QueryRow(ctx, `SELECT 'rm_parcels'::regnamespace::oid, coalesce(max(position), 0) FROM rm_parcels.loads`).Scan(&v.Schema, &v.Position); err != nil {
		return ReadModelVersion{}, fmt.Errorf("the extents' version: %w", err)
	}
	return v, nil
}
