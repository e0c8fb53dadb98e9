package parcels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections"
)

// Queries answers the records service's public questions from the
// parcels read model. Safe for concurrent use.
type Queries struct{ pool projections.DB }

// NewQueries returns the queries over the parcels read model.
func NewQueries(pool projections.DB) *Queries { return &Queries{pool: pool} }

// ParcelKey names a parcel: its county and APN.
type ParcelKey struct {
	County string `json:"county"`
	APN    string `json:"apn"`
}

// ParcelFeature is a parcel as the bbox search returns it; Layers (the
// keys of the layers naming it) and Signals (their records) are JSON
// arrays rendered by PostgreSQL, ready to be written into a response.
type ParcelFeature struct {
	ParcelKey
	Address   string
	Lon, Lat  float64
	SourceURL string
	Layers    json.RawMessage
	Signals   json.RawMessage
	// Rank orders a ranked search: the distance in metres of a nearby
	// search, the match score of an address search; 0 otherwise.
	Rank float64
	// Unplaced: the parcel has no coordinates (an address or APN search
	// finds it; Lon and Lat are 0).
	Unplaced bool
}

// InBBox returns up to limit parcels with coordinates inside b, named by
// any of layers (every parcel when layers is empty), in (county, apn) order
// after the cursor.
func (q *Queries) InBBox(ctx context.Context, b records.BBox, layers []string, after *ParcelKey, limit int) ([]ParcelFeature, error) {
	// The GiST index finds the box's parcels (the table is filled in
	// spatial order, so they sit on few pages); the page is the first
	// `limit` of them by key, and only those are rendered. && compares
	// single-precision bounding boxes rounded outwards, so it also lets
	// through points up to a few millionths of a degree outside the box:
	// the coordinates are then compared exactly (edges included, as
	// ST_Intersects would, at the cost of two comparisons per point).
	sql := `SELECT county, apn, address, ST_X(geom), ST_Y(geom), source_url, array_to_json(layers)::text, signals::text FROM (
		SELECT county, apn, address, geom, source_url, layers, signals
		FROM rm_parcels.parcels WHERE geom && ST_MakeEnvelope($1, $2, $3, $4, 4326)
		AND ST_X(geom) BETWEEN $1 AND $3 AND ST_Y(geom) BETWEEN $2 AND $4`
	args := []any{b.West, b.South, b.East, b.North}
	if len(layers) > 0 {
		args = append(args, layers)
		sql += fmt.Sprintf(` AND layers && $%d::text[]`, len(args))
	}
	if after != nil {
		args = append(args, after.County, after.APN)
		sql += fmt.Sprintf(` AND (county, apn) > ($%d, $%d)`, len(args)-1, len(args))
	}
	args = append(args, limit)
	sql += fmt.Sprintf(` ORDER BY county, apn LIMIT $%d) page ORDER BY county, apn`, len(args))
	rows, err := q.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("parcels in bbox: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ParcelFeature, error) {
		var f ParcelFeature
		var layers, sig string
		err := r.Scan(&f.County, &f.APN, &f.Address, &f.Lon, &f.Lat, &f.SourceURL, &layers, &sig)
		f.Layers, f.Signals = json.RawMessage(layers), json.RawMessage(sig)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("parcels in bbox: %w", err)
	}
	return out, nil
}

// LayerSignal is one layer's record of a parcel with its freshness.
type LayerSignal struct {
	Layer       records.Layer     `json:"layer"`
	Named       bool              `json:"named"`
	SourceDate  string            `json:"source_date"`
	RecordDate  *string           `json:"record_date"`
	FirstSeen   time.Time         `json:"first_seen"`
	LastSeen    time.Time         `json:"last_seen"`
	LastCrawl   time.Time         `json:"last_crawl"`
	SourceURL   string            `json:"source_url"`
	AmountUSD   *json.Number      `json:"amount_usd"`
	RecordCount int               `json:"record_count"`
	Lender      *string           `json:"lender,omitempty"`
	Detail      map[string]string `json:"detail"`
}

// Parcel is one parcel with every layer that ever named it.
type Parcel struct {
	ParcelKey
	Address   string        `json:"address"`
	Location  *[2]float64   `json:"location"`
	SourceURL string        `json:"source_url"`
	Layers    []LayerSignal `json:"-"`
}

// ParcelsByAPN finds parcels by APN (compared normalized), in one county or
// in any.
func (q *Queries) ParcelsByAPN(ctx context.Context, apn, county string) ([]ParcelKey, error) {
	rows, err := q.pool.Query(ctx, `SELECT county, apn FROM rm_parcels.parcels WHERE apn_norm = $1 AND ($2 = '' OR county = $2) ORDER BY county, apn LIMIT 20`,
		records.NormalizeAPN(apn), county)
	if err != nil {
		return nil, fmt.Errorf("finding parcel %q: %w", apn, err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ParcelKey])
}

// Parcel returns one parcel with its layer signals.
func (q *Queries) Parcel(ctx context.Context, k ParcelKey) (Parcel, error) {
	p := Parcel{ParcelKey: k}
	var lon, lat *float64
	err := q.pool.QueryRow(ctx, `SELECT address, ST_X(geom), ST_Y(geom), source_url FROM rm_parcels.parcels WHERE county = $1 AND apn = $2`, k.County, k.APN).
		Scan(&p.Address, &lon, &lat, &p.SourceURL)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, domain.NotFound("parcel_not_found", "no parcel %s in county %s", k.APN, k.County)
	}
	if err != nil {
		return p, fmt.Errorf("loading parcel: %w", err)
	}
	if lon != nil && lat != nil {
		p.Location = &[2]float64{*lon, *lat}
	}
	rows, err := q.pool.Query(ctx, `SELECT layer, named, to_char(source_date, 'YYYY-MM-DD'), to_char(record_date, 'YYYY-MM-DD'), first_seen, last_seen, last_crawl,
			source_url, round(amount_micros / 1000000.0, 2)::text, record_count, lender, coalesce(detail, '{}')::text
		FROM rm_parcels.parcel_layers WHERE county = $1 AND apn = $2 ORDER BY layer`, k.County, k.APN)
	if err != nil {
		return p, fmt.Errorf("loading parcel signals: %w", err)
	}
	p.Layers, err = pgx.CollectRows(rows, scanSignal)
	if err != nil {
		return p, fmt.Errorf("loading parcel signals: %w", err)
	}
	return p, nil
}

func scanSignal(r pgx.CollectableRow) (LayerSignal, error) {
	var s LayerSignal
	var amount *string
	var detail string
	if err := r.Scan(&s.Layer, &s.Named, &s.SourceDate, &s.RecordDate, &s.FirstSeen, &s.LastSeen, &s.LastCrawl, &s.SourceURL, &amount, &s.RecordCount, &s.Lender, &detail); err != nil {
		return s, err
	}
	s.FirstSeen, s.LastSeen, s.LastCrawl = s.FirstSeen.UTC(), s.LastSeen.UTC(), s.LastCrawl.UTC()
	if amount != nil {
		n := json.Number(*amount)
		s.AmountUSD = &n
	}
	s.Detail = map[string]string{}
	err := json.Unmarshal([]byte(detail), &s.Detail)
	return s, err
}

// Record is a layer's current record of a parcel (the key-less API's
// records, tax sales).
type Record struct {
	ParcelKey
	Address string `json:"address"`
	LayerSignal
}

// RecordFilter selects records.
type RecordFilter struct {
	Layer         string
	CountyPrefix  string // a county FIPS, or a state's 2-digit FIPS
	Limit, Offset int
}

// Records lists the records layers currently hold, by county and APN.
func (q *Queries) Records(ctx context.Context, f RecordFilter) ([]Record, int, error) {
	var total int
	if err := q.pool.QueryRow(ctx, `SELECT count(*) FROM rm_parcels.parcel_layers WHERE named AND ($1 = '' OR layer = $1) AND county LIKE $2 || '%'`,
		f.Layer, f.CountyPrefix).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("counting records: %w", err)
	}
	rows, err := q.pool.Query(ctx, `SELECT county, apn, address, layer, named, to_char(source_date, 'YYYY-MM-DD'), to_char(record_date, 'YYYY-MM-DD'), first_seen, last_seen, last_crawl,
			source_url, round(amount_micros / 1000000.0, 2)::text, record_count, lender, coalesce(detail, '{}')::text
		FROM rm_parcels.parcel_layers WHERE named AND ($1 = '' OR layer = $1) AND county LIKE $2 || '%'
		ORDER BY county, apn, layer LIMIT $3 OFFSET $4`, f.Layer, f.CountyPrefix, f.Limit, f.Offset)
	if err != nil {
		return nil, 0, fmt.Errorf("listing records: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Record, error) {
		var rec Record
		var amount *string
		var detail string
		err := r.Scan(&rec.County, &rec.APN, &rec.Address, &rec.Layer, &rec.Named, &rec.SourceDate, &rec.RecordDate, &rec.FirstSeen, &rec.LastSeen, &rec.LastCrawl,
			&rec.SourceURL, &amount, &rec.RecordCount, &rec.Lender, &detail)
		if err != nil {
			return rec, err
		}
		rec.FirstSeen, rec.LastSeen, rec.LastCrawl = rec.FirstSeen.UTC(), rec.LastSeen.UTC(), rec.LastCrawl.UTC()
		if amount != nil {
			n := json.Number(*amount)
			rec.AmountUSD = &n
		}
		rec.Detail = map[string]string{}
		return rec, json.Unmarshal([]byte(detail), &rec.Detail)
	})
	if err != nil {
		return nil, 0, fmt.Errorf("listing records: %w", err)
	}
	return out, total, nil
}

// Lender is a plaintiff of lis pendens filings.
type Lender struct {
	Name      string   `json:"name"`
	Filings   int      `json:"filings"`
	Counties  []string `json:"counties"`
	LastFiled *string  `json:"last_filed"`
	SourceURL string   `json:"source_url"`
}

// Lenders lists the plaintiffs of the lis pendens layer, most filings first.
func (q *Queries) Lenders(ctx context.Context, countyPrefix string, limit, offset int) ([]Lender, int, error) {
	var total int
	if err := q.pool.QueryRow(ctx, `SELECT count(DISTINCT lender) FROM rm_parcels.parcel_layers WHERE named AND layer = 'lis_pendens' AND lender IS NOT NULL AND county LIKE $1 || '%'`,
		countyPrefix).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("counting lenders: %w", err)
	}
	rows, err := q.pool.Query(ctx, `SELECT lender, sum(record_count)::int, array_agg(DISTINCT county ORDER BY county), to_char(max(record_date), 'YYYY-MM-DD'), min(source_url)
		FROM rm_parcels.parcel_layers WHERE named AND layer = 'lis_pendens' AND lender IS NOT NULL AND county LIKE $1 || '%'
		GROUP BY lender ORDER BY 2 DESC, 1 LIMIT $2 OFFSET $3`, countyPrefix, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("listing lenders: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Lender])
	if err != nil {
		return nil, 0, fmt.Errorf("listing lenders: %w", err)
	}
	return out, total, nil
}

// LayerState is what the read model holds of one layer, for the
// data-sources report.
type LayerState struct {
	Layer            string
	Loads            int
	LastSourceDate   *string
	LastCrawl        *time.Time
	LastLoadedAt     *time.Time
	LastLoadID       *string
	Counties         []string
	ParcelsNamed     int
	NamedNoGeometry  int
	RejectedLastLoad int
	FailedLoads      int
	SourceURLs       []string
}

// LayerStates reports every layer that has at least one load, computed now
// from the loads and parcel_layers tables.
func (q *Queries) LayerStates(ctx context.Context) (map[string]LayerState, error) {
	rows, err := q.pool.Query(ctx, `
WITH done AS (SELECT * FROM rm_parcels.loads WHERE status = 'completed'),
last AS (SELECT DISTINCT ON (layer) layer, to_char(source_date, 'YYYY-MM-DD') sd, crawled_at, finished_at, load_id::text, rows_rejected
         FROM done ORDER BY layer, finished_at DESC, position DESC),
named AS (SELECT pl.layer, count(*) n, count(*) FILTER (WHERE p.geom IS NULL) nogeom
          FROM rm_parcels.parcel_layers pl JOIN rm_parcels.parcels p USING (county, apn) WHERE pl.named GROUP BY pl.layer),
agg AS (SELECT layer, count(*) FILTER (WHERE status = 'completed') loads, count(*) FILTER (WHERE status = 'failed') failed,
               array(SELECT DISTINCT c FROM rm_parcels.loads l2, unnest(l2.counties) c WHERE l2.layer = l.layer AND l2.status = 'completed' ORDER BY c) counties,
               array(SELECT DISTINCT source_url FROM rm_parcels.loads l3 WHERE l3.layer = l.layer AND l3.status = 'completed' ORDER BY 1) urls
        FROM rm_parcels.loads l GROUP BY layer)
SELECT agg.layer, agg.loads, last.sd, last.crawled_at, last.finished_at, last.load_id, agg.counties, coalesce(named.n, 0), coalesce(named.nogeom, 0),
       coalesce(last.rows_rejected, 0), agg.failed, agg.urls
FROM agg LEFT JOIN last USING (layer) LEFT JOIN named USING (layer)`)
	if err != nil {
		return nil, fmt.Errorf("reading layer states: %w", err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[LayerState])
	if err != nil {
		return nil, fmt.Errorf("reading layer states: %w", err)
	}
	out := map[string]LayerState{}
	for _, s := range list {
		out[s.Layer] = s
	}
	return out, nil
}

// CountiesCovered returns, per county FIPS, the layers with a completed
// load covering it.
func (q *Queries) CountiesCovered(ctx context.Context) (map[string][]string, error) {
	rows, err := q.pool.Query(ctx, `SELECT c, array_agg(DISTINCT layer ORDER BY layer) FROM rm_parcels.loads, unnest(counties) c WHERE status = 'completed' GROUP BY c`)
	if err != nil {
		return nil, fmt.Errorf("reading coverage: %w", err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var c string
		var ls []string
		if err := rows.Scan(&c, &ls); err != nil {
			return nil, err
		}
		out[c] = ls
	}
	return out, rows.Err()
}

// RankedKey is where a ranked page (nearest first, best match first)
// continues: after the parcel Key of rank Rank.
type RankedKey struct {
	Rank float64
	ParcelKey
}

// featureColumns are the columns a search renders, in ParcelFeature's
// order, over a subquery aliased page whose rank column is rank.
const featureColumns = `county, apn, address, ST_X(geom), ST_Y(geom), source_url, array_to_json(layers)::text, signals::text, rank`

// Near returns up to limit parcels within n.RadiusM metres of n's point
// (geodesic distance on the WGS 84 spheroid), named by any of layers (every
// parcel when layers is empty), nearest first (then by county and APN),
// after the cursor; each feature's Rank is its distance in metres.
func (q *Queries) Near(ctx context.Context, n records.Near, layers []string, after *RankedKey, limit int) ([]ParcelFeature, error) {
	// The envelope finds the candidates through the GiST index; the
	// geodesic distance keeps those within the radius and orders them.
	env := n.Envelope()
	args := []any{n.Lon, n.Lat, n.RadiusM, env.West, env.South, env.East, env.North}
	sql := `SELECT ` + featureColumns + ` FROM (
		SELECT county, apn, address, geom, source_url, layers, signals,
		       ST_Distance(geom::geography, ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography) AS rank
		FROM rm_parcels.parcels
		WHERE geom && ST_MakeEnvelope($4, $5, $6, $7, 4326)
		  AND ST_DWithin(geom::geography, ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography, $3)`
	sql, args = withLayers(sql, args, layers)
	sql += `) page`
	if after != nil {
		args = append(args, after.Rank, after.County, after.APN)
		sql += fmt.Sprintf(` WHERE (rank, county, apn) > ($%d, $%d, $%d)`, len(args)-2, len(args)-1, len(args))
	}
	args = append(args, limit)
	sql += fmt.Sprintf(` ORDER BY rank, county, apn LIMIT $%d`, len(args))
	return q.features(ctx, "parcels near a point", sql, args)
}

// ByAddress returns up to limit parcels whose normalized address matches
// norm (a normalized address, NormalizeAddress's) by trigrams: norm's
// word similarity to the address at least pg_trgm's threshold (0.6, so
// "2041 W NORTH" finds "2041 W NORTH AVE" and "2041 W NROTH AVE" does
// too), best match first (then by county and APN), after the cursor;
// each feature's Rank is its match score from 0 to 1 (the mean of the
// word similarity and the similarity of the whole address).
//
// When norm begins with a house number ("2041", "2041A") the address must
// begin with the same number: the btree index on the normalized address
// finds those few, and the trigrams rank their streets. Without one, the
// trigram index finds the candidates (every parcel of a street, ranked).
func (q *Queries) ByAddress(ctx context.Context, norm string, layers []string, after *RankedKey, limit int) ([]ParcelFeature, error) {
	args := []any{norm}
	sql := `SELECT ` + featureColumns + ` FROM (
		SELECT county, apn, address, geom, source_url, layers, signals,
		       ((word_similarity($1, norm_address) + similarity($1, norm_address)) / 2)::float8 AS rank
		FROM rm_parcels.parcels
		WHERE $1 <% norm_address AND norm_address <> ''`
	if n := records.HouseNumber(norm); n != "" {
		// Letters and digits only: nothing LIKE reads specially.
		args = append(args, n+" %")
		sql += fmt.Sprintf(` AND norm_address LIKE $%d`, len(args))
	}
	sql, args = withLayers(sql, args, layers)
	sql += `) page`
	if after != nil {
		args = append(args, after.Rank, after.County, after.APN)
		sql += fmt.Sprintf(` WHERE rank < $%d OR (rank = $%d AND (county, apn) > ($%d, $%d))`, len(args)-2, len(args)-2, len(args)-1, len(args))
	}
	args = append(args, limit)
	sql += fmt.Sprintf(` ORDER BY rank DESC, county, apn LIMIT $%d`, len(args))
	return q.features(ctx, "parcels by address", sql, args)
}

// ByAPN returns up to limit parcels whose normalized APN is apnNorm, in
// county (any county when empty), named by any of layers, in (county, apn)
// order after the cursor.
func (q *Queries) ByAPN(ctx context.Context, apnNorm, county string, layers []string, after *ParcelKey, limit int) ([]ParcelFeature, error) {
	args := []any{apnNorm, county}
	sql := `SELECT ` + featureColumns + ` FROM (
		SELECT county, apn, address, geom, source_url, layers, signals, 0::float8 AS rank
		FROM rm_parcels.parcels WHERE apn_norm = $1 AND ($2 = '' OR county = $2)`
	sql, args = withLayers(sql, args, layers)
	return q.keyOrdered(ctx, "parcels by APN", sql, args, after, limit)
}

// PolygonPieceVertices is the most vertices a piece of a query polygon
// has (InPolygon).
const PolygonPieceVertices = 64

// InPolygon returns up to limit parcels with coordinates inside p (its
// boundary included), named by any of layers, in (county, apn) order after
// the cursor. A polygon PostGIS finds invalid (its rings cross) is a
// domain validation error on field geometry with PostGIS's reason.
//
// The polygon is cut into pieces of at most PolygonPieceVertices
// vertices (ST_Subdivide) before any parcel is read: the GiST index finds
// each piece's candidates by the piece's own small box, and each point is
// tested against a piece of a few dozen edges, not the whole polygon (a
// legal 1,000-position saw-tooth over 2 degrees took 33 s tested whole and
// 0.16 s in pieces, on the demo data). A point on an edge two pieces share
// is counted once (DISTINCT ON).
func (q *Queries) InPolygon(ctx context.Context, p records.Polygon, layers []string, after *ParcelKey, limit int) ([]ParcelFeature, error) {
	args := []any{p.GeoJSON, PolygonPieceVertices}
	sql := `SELECT ` + featureColumns + ` FROM (
		SELECT DISTINCT ON (county, apn) county, apn, address, geom, source_url, layers, signals, 0::float8 AS rank
		FROM (SELECT ST_Subdivide(g, $2::int) AS piece FROM (SELECT ST_SetSRID(ST_GeomFromGeoJSON($1), 4326) AS g) q WHERE ST_IsValid(g)) pieces
		JOIN rm_parcels.parcels ON geom && pieces.piece AND ST_Covers(pieces.piece, geom)
		WHERE true`
	sql, args = withLayers(sql, args, layers)
	out, err := q.keyOrdered(ctx, "parcels in a polygon", sql, args, after, limit)
	if err != nil || len(out) > 0 {
		return out, err
	}
	// No parcel: say so, unless the polygon is invalid.
	var reason string
	if err := q.pool.QueryRow(ctx, `SELECT ST_IsValidReason(ST_SetSRID(ST_GeomFromGeoJSON($1), 4326))`, p.GeoJSON).Scan(&reason); err != nil {
		return nil, fmt.Errorf("checking the query polygon: %w", err)
	}
	if reason != "Valid Geometry" {
		return nil, domain.Invalid("invalid_geometry", "geometry", "geometry is not a valid polygon: %s", reason)
	}
	return out, nil
}

// withLayers adds the layers filter to a search's inner query.
func withLayers(sql string, args []any, layers []string) (string, []any) {
	if len(layers) == 0 {
		return sql, args
	}
	args = append(args, layers)
	return sql + fmt.Sprintf(` AND layers && $%d::text[]`, len(args)), args
}

// keyOrdered pages an inner query in (county, apn) order.
func (q *Queries) keyOrdered(ctx context.Context, what, sql string, args []any, after *ParcelKey, limit int) ([]ParcelFeature, error) {
	if after != nil {
		args = append(args, after.County, after.APN)
		sql += fmt.Sprintf(` AND (county, apn) > ($%d, $%d)`, len(args)-1, len(args))
	}
	args = append(args, limit)
	sql += fmt.Sprintf(` ORDER BY county, apn LIMIT $%d) page ORDER BY county, apn`, len(args))
	return q.features(ctx, what, sql, args)
}

// features runs a search's query and reads its features.
func (q *Queries) features(ctx context.Context, what, sql string, args []any) ([]ParcelFeature, error) {
	rows, err := q.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ParcelFeature, error) {
		var f ParcelFeature
		var layers, sig string
		var lon, lat *float64
		err := r.Scan(&f.County, &f.APN, &f.Address, &lon, &lat, &f.SourceURL, &layers, &sig, &f.Rank)
		f.Layers, f.Signals = json.RawMessage(layers), json.RawMessage(sig)
		if lon != nil && lat != nil {
			f.Lon, f.Lat = *lon, *lat
		} else {
			f.Unplaced = true
		}
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
