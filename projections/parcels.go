package projections

import (
	"context"
	"fmt"
	"time"

	json "github.com/goccy/go-json"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/eventstore"
)

// Parcels is the read model of the records service's public data: layer
// loads, parcels (PostGIS points) and, per parcel and layer, the freshness
// of the layer's signal. A load's rows are staged as they arrive and
// applied only when the load completes, so a failed or unfinished load
// leaves the parcels as they were.
type Parcels struct{}

// ParcelsName is the parcels projection's name and checkpoint key.
const ParcelsName = "parcels"

// Name implements Projection.
func (Parcels) Name() string { return ParcelsName }

// DDL implements Projection.
func (Parcels) DDL() string {
	return `
CREATE TABLE loads (
    load_id          uuid        PRIMARY KEY,
    layer            text        COLLATE "C" NOT NULL,
    counties         text[]      NOT NULL,
    source_url       text        NOT NULL,
    source_date      date        NOT NULL,
    file             text        NOT NULL,
    crawled_at       timestamptz NOT NULL,
    started_at       timestamptz NOT NULL,
    finished_at      timestamptz,
    status           text        NOT NULL,
    reason           text,
    rows_read        integer,
    rows_loaded      integer,
    rows_skipped     integer,
    rows_rejected    integer,
    rows_without_geometry integer,
    parcels          integer,
    rejects          jsonb,
    position         bigint      NOT NULL
);
CREATE TABLE staged (
    load_id      uuid    NOT NULL,
    line         integer NOT NULL,
    county       text    COLLATE "C" NOT NULL,
    apn          text    COLLATE "C" NOT NULL,
    apn_norm     text    COLLATE "C" NOT NULL,
    address      text    NOT NULL,
    norm_address text    COLLATE "C" NOT NULL,
    lon          double precision,
    lat          double precision,
    source_url   text,
    record_date  date,
    amount_micros bigint,
    lender       text,
    detail       jsonb
);
CREATE INDEX staged_load ON staged (load_id);
CREATE TABLE parcel_layers (
    county        text        COLLATE "C" NOT NULL,
    apn           text        COLLATE "C" NOT NULL,
    layer         text        COLLATE "C" NOT NULL,
    named         boolean     NOT NULL,
    first_seen    timestamptz NOT NULL,
    last_seen     timestamptz NOT NULL,
    last_crawl    timestamptz NOT NULL,
    source_date   date        NOT NULL,
    source_url    text        NOT NULL,
    record_date   date,
    amount_micros bigint,
    record_count  integer     NOT NULL,
    lender        text,
    address       text        NOT NULL,
    detail        jsonb,
    load_id       uuid        NOT NULL,
    position      bigint      NOT NULL,
    PRIMARY KEY (county, apn, layer)
);
CREATE TABLE parcels (
    county       text        COLLATE "C" NOT NULL,
    apn          text        COLLATE "C" NOT NULL,
    apn_norm     text        COLLATE "C" NOT NULL,
    address      text        NOT NULL,
    norm_address text        COLLATE "C" NOT NULL,
    geom         geometry(Point, 4326),
    source_url   text        NOT NULL,
    layers       text[]      NOT NULL DEFAULT '{}',
    signals      jsonb       NOT NULL DEFAULT '[]',
    position     bigint      NOT NULL,
    PRIMARY KEY (county, apn)
);
`
}

// DeferredDDL implements IndexDeferrer.
func (Parcels) DeferredDDL() string {
	return `
CREATE INDEX parcels_geom ON parcels USING gist (geom);
CREATE INDEX parcels_apn_norm ON parcels (apn_norm);
CREATE INDEX parcels_norm_address ON parcels (norm_address) WHERE norm_address <> '';
CREATE INDEX parcel_layers_layer ON parcel_layers (layer, county) WHERE named;
CREATE INDEX parcel_layers_lender ON parcel_layers (lender) WHERE lender IS NOT NULL AND named;
`
}

type stagedRow struct {
	load uuid.UUID
	records.Row
}

// Apply implements Projection.
func (Parcels) Apply(ctx context.Context, tx pgx.Tx, events []eventstore.Event) error {
	var staged []stagedRow
	flush := func() error {
		if len(staged) == 0 {
			return nil
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"staged"},
			[]string{"load_id", "line", "county", "apn", "apn_norm", "address", "norm_address", "lon", "lat", "source_url", "record_date", "amount_micros", "lender", "detail"},
			pgx.CopyFromSlice(len(staged), func(i int) ([]any, error) {
				r := staged[i]
				var url, lender *string
				if r.SourceURL != "" {
					url = &r.SourceURL
				}
				if r.Lender != "" {
					lender = &r.Lender
				}
				var date *time.Time
				if r.Date != "" {
					d, err := time.Parse(time.DateOnly, r.Date)
					if err != nil {
						return nil, fmt.Errorf("line %d: date %q: %w", r.Line, r.Date, err)
					}
					date = &d
				}
				var detail []byte
				if len(r.Detail) > 0 {
					detail, _ = json.Marshal(r.Detail)
				}
				return []any{r.load, int32(r.Line), r.County, r.APN, records.NormalizeAPN(r.APN), r.Address, records.NormalizeAddress(r.Address),
					r.Lon, r.Lat, url, date, r.Amount, lender, detail}, nil
			}))
		staged = staged[:0]
		if err != nil {
			return fmt.Errorf("staging layer rows: %w", err)
		}
		return nil
	}
	for _, e := range events {
		switch e.Type {
		case records.LayerLoadStarted{}.EventType():
			var v records.LayerLoadStarted
			if err := json.Unmarshal(e.Data, &v); err != nil {
				return fmt.Errorf("event %d: %w", e.Position, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO loads (load_id, layer, counties, source_url, source_date, file, crawled_at, started_at, status, position)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'started', $9)`,
				v.LoadID, string(v.Layer), v.Counties, v.SourceURL, v.SourceDate, v.File, v.CrawledAt, v.StartedAt, int64(e.Position)); err != nil {
				return fmt.Errorf("event %d: recording load start: %w", e.Position, err)
			}
		case records.LayerRowsLoaded{}.EventType():
			var v records.LayerRowsLoaded
			if err := json.Unmarshal(e.Data, &v); err != nil {
				return fmt.Errorf("event %d: %w", e.Position, err)
			}
			for _, r := range v.Rows {
				staged = append(staged, stagedRow{load: v.LoadID, Row: r})
			}
		case records.LayerLoadCompleted{}.EventType():
			var v records.LayerLoadCompleted
			if err := json.Unmarshal(e.Data, &v); err != nil {
				return fmt.Errorf("event %d: %w", e.Position, err)
			}
			if err := flush(); err != nil {
				return err
			}
			if err := completeLoad(ctx, tx, v, int64(e.Position)); err != nil {
				return fmt.Errorf("event %d: completing load %s: %w", e.Position, v.LoadID, err)
			}
		case records.LayerLoadFailed{}.EventType():
			var v records.LayerLoadFailed
			if err := json.Unmarshal(e.Data, &v); err != nil {
				return fmt.Errorf("event %d: %w", e.Position, err)
			}
			if err := flush(); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM staged WHERE load_id = $1`, v.LoadID); err != nil {
				return fmt.Errorf("event %d: %w", e.Position, err)
			}
			if _, err := tx.Exec(ctx, `UPDATE loads SET status = 'failed', reason = $2, finished_at = $3, position = $4 WHERE load_id = $1`,
				v.LoadID, v.Reason, v.FailedAt, int64(e.Position)); err != nil {
				return fmt.Errorf("event %d: %w", e.Position, err)
			}
		}
	}
	return flush()
}

// completeLoad applies a completed load's staged rows: the parcels it names
// are (again) named by its layer, with first/last seen; parcels of its
// counties it does not name stop being named (last_seen stays).
func completeLoad(ctx context.Context, tx pgx.Tx, v records.LayerLoadCompleted, pos int64) error {
	var sourceURL string
	var sourceDate time.Time
	if err := tx.QueryRow(ctx, `SELECT source_url, source_date FROM loads WHERE load_id = $1`, v.LoadID).Scan(&sourceURL, &sourceDate); err != nil {
		return fmt.Errorf("the load's start: %w", err)
	}
	layer := string(v.Layer)
	var withoutGeom, parcels int
	if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE lon IS NULL), count(DISTINCT (county, apn)) FROM staged WHERE load_id = $1`, v.LoadID).
		Scan(&withoutGeom, &parcels); err != nil {
		return err
	}
	stmts := []struct {
		what string
		sql  string
		args []any
	}{
		{"naming parcels", `
INSERT INTO parcel_layers AS pl (county, apn, layer, named, first_seen, last_seen, last_crawl, source_date, source_url,
    record_date, amount_micros, record_count, lender, address, detail, load_id, position)
SELECT county, apn, $2, true, $3, $3, $3, $4, coalesce(source_url, $5), rdate, amt, cnt, lender, address, detail, $1, $6
FROM (
    SELECT DISTINCT ON (county, apn) county, apn, source_url, lender, address, detail,
        max(record_date) OVER w AS rdate, sum(amount_micros) OVER w AS amt, count(*) OVER w AS cnt
    FROM staged WHERE load_id = $1
    WINDOW w AS (PARTITION BY county, apn)
    ORDER BY county, apn, line DESC
) s
ON CONFLICT (county, apn, layer) DO UPDATE SET named = true, last_seen = excluded.last_seen, last_crawl = excluded.last_crawl,
    source_date = excluded.source_date, source_url = excluded.source_url, record_date = excluded.record_date,
    amount_micros = excluded.amount_micros, record_count = excluded.record_count, lender = excluded.lender,
    address = excluded.address, detail = excluded.detail, load_id = excluded.load_id, position = excluded.position`,
			[]any{v.LoadID, layer, v.CrawledAt, sourceDate, sourceURL, pos}},
		{"dropping parcels the load no longer names", `
UPDATE parcel_layers SET named = false, last_crawl = $4, position = $5
WHERE layer = $2 AND county = ANY($3) AND named AND load_id <> $1`,
			[]any{v.LoadID, layer, v.Counties, v.CrawledAt, pos}},
		{"upserting parcels", `
INSERT INTO parcels AS p (county, apn, apn_norm, address, norm_address, geom, source_url, position)
SELECT DISTINCT ON (county, apn) county, apn, apn_norm, address, norm_address,
    CASE WHEN lon IS NOT NULL THEN ST_SetSRID(ST_MakePoint(lon, lat), 4326) END, coalesce(source_url, $2), $3
FROM staged WHERE load_id = $1
ORDER BY county, apn, (lon IS NOT NULL) DESC, line DESC
ON CONFLICT (county, apn) DO UPDATE SET
    address = CASE WHEN excluded.address <> '' THEN excluded.address ELSE p.address END,
    norm_address = CASE WHEN excluded.address <> '' THEN excluded.norm_address ELSE p.norm_address END,
    geom = coalesce(excluded.geom, p.geom), source_url = excluded.source_url, position = excluded.position`,
			[]any{v.LoadID, sourceURL, pos}},
		{"rendering the parcels' signals", `
UPDATE parcels p SET layers = s.layers, signals = s.signals, position = $3
FROM (
    SELECT pl.county, pl.apn,
        coalesce(array_agg(pl.layer ORDER BY pl.layer) FILTER (WHERE pl.named), '{}') AS layers,
        coalesce(jsonb_agg(jsonb_build_object(
            'layer', pl.layer,
            'source_date', to_char(pl.source_date, 'YYYY-MM-DD'),
            'record_date', to_char(pl.record_date, 'YYYY-MM-DD'),
            'first_seen', to_char(pl.first_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
            'last_seen', to_char(pl.last_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
            'last_crawl', to_char(pl.last_crawl AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
            'source_url', pl.source_url) ORDER BY pl.layer) FILTER (WHERE pl.named), '[]') AS signals
    FROM parcel_layers pl
    WHERE EXISTS (SELECT 1 FROM parcel_layers a WHERE a.layer = $1 AND a.county = ANY($2) AND a.position = $3
                  AND a.county = pl.county AND a.apn = pl.apn)
    GROUP BY pl.county, pl.apn
) s
WHERE p.county = s.county AND p.apn = s.apn`,
			[]any{layer, v.Counties, pos}},
		{"clearing the stage", `DELETE FROM staged WHERE load_id = $1`, []any{v.LoadID}},
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s.sql, s.args...); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	rejects, _ := json.Marshal(v.Rejects)
	_, err := tx.Exec(ctx, `UPDATE loads SET status = 'completed', finished_at = $2, rows_read = $3, rows_loaded = $4, rows_skipped = $5,
		rows_rejected = $6, rows_without_geometry = $7, parcels = $8, rejects = $9, position = $10 WHERE load_id = $1`,
		v.LoadID, v.CompletedAt, v.RowsRead, v.RowsLoaded, v.RowsSkipped, v.RowsRejected, withoutGeom, parcels, rejects, pos)
	return err
}
