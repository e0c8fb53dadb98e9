package parcels

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"encoding/json"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/projections"
)

// Projection is the read model of the records service's public data: layer
// loads, parcels (PostGIS points) and, per parcel and layer, the freshness
// of the layer's signal. A load's rows are staged as they arrive and
// applied only when the load completes, so a failed or unfinished load
// leaves the parcels as they were.
type Projection struct {
	// Logger, when set, gets the time each step of a load's publishing
	// took (at debug level).
	Logger *slog.Logger
}

// Name is the parcels projection's name and checkpoint key.
const Name = "parcels"

// ddl is the read model's tables.
const ddl = `
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
    -- What a vector tile reads (tiles.go): the point in Web Mercator, and
    -- beside layers (same order) the newest date of each (layerDatesSQL).
    geom_mercator geometry(Point, 3857) GENERATED ALWAYS AS (ST_Transform(geom, 3857)) STORED,
    layer_dates  date[]      NOT NULL DEFAULT '{}',
    PRIMARY KEY (county, apn)
);
` + tileCellsDDL + watchDDL

// deferredDDL is the read model's secondary indexes.
const deferredDDL = `
CREATE INDEX parcels_geom ON parcels USING gist (geom);
CREATE INDEX parcels_geom_mercator ON parcels USING gist (geom_mercator);
CREATE INDEX parcels_apn_norm ON parcels (apn_norm);
CREATE INDEX parcels_norm_address ON parcels (norm_address) WHERE norm_address <> '';
CREATE INDEX parcels_address_trgm ON parcels USING gin (norm_address gin_trgm_ops) WHERE norm_address <> '';
CREATE INDEX parcel_layers_layer ON parcel_layers (layer, county) WHERE named;
CREATE INDEX parcel_layers_lender ON parcel_layers (lender) WHERE lender IS NOT NULL AND named;
` + tileCellsDeferredDDL + watchDeferredDDL

type stagedRow struct {
	load uuid.UUID
	records.Row
}

// Spec implements projections.Projection.
func (p Projection) Spec() projections.Spec {
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return projections.Spec{Name: Name, DDL: ddl + keyRules() + cellRules(), DeferredDDL: deferredDDL, Cut: cut, BatchTimeout: batchTimeout,
		Batch: func() projections.Batch { return newBatch(log) }}
}

// batch is what a batch copies in at once: the layer rows to stage and
// the lists' rows for the monitors (watch.go), copied before an event
// that reads them and at the end.
type batch struct {
	log     *slog.Logger
	staged  []stagedRow
	watched []watchRow
}

func newBatch(log *slog.Logger) projections.Batch {
	b := &batch{log: log}
	return projections.Batch{Handlers: []projections.Handler{
		projections.On(loadStarted), projections.On(b.rowsLoaded), projections.On(b.loadCompleted), projections.On(b.loadFailed),
		// The list monitors' outbox (watch.go).
		projections.On(b.listRowsImported),
		watchHandler[records.MonitorCreated](b.flush), watchHandler[records.MonitorDeleted](b.flush), watchHandler[records.MonitorDisabled](b.flush),
		watchHandler[records.ContactDataErased](b.flush), watchHandler[records.WebhookDeliveryAttempted](b.flush),
	}, Flush: b.flush}
}

// watchHandler is the handler of an event of the monitors' outbox: what
// the batch holds is copied in first (flush), then the event applied.
func watchHandler[T any, P interface {
	*T
	domain.Event
}](flush func(context.Context, pgx.Tx) error) projections.Handler {
	return projections.On[T, P](func(ctx context.Context, tx pgx.Tx, e projections.Event, _ *T) error {
		if err := flush(ctx, tx); err != nil {
			return err
		}
		return applyWatch(ctx, tx, e)
	})
}

// flush copies in the rows the batch holds.
func (b *batch) flush(ctx context.Context, tx pgx.Tx) error {
	if err := copyWatchRows(ctx, tx, b.watched); err != nil {
		return err
	}
	b.watched = b.watched[:0]
	staged := b.staged
	if len(staged) == 0 {
		return nil
	}
	rows, err := stagedRows(staged)
	if err != nil {
		return fmt.Errorf("staging layer rows: %w", err)
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"staged"},
		[]string{"load_id", "line", "county", "apn", "apn_norm", "address", "norm_address", "lon", "lat", "source_url", "record_date", "amount_micros", "lender", "detail"},
		pgx.CopyFromRows(rows))
	b.staged = b.staged[:0]
	if err != nil {
		return fmt.Errorf("staging layer rows: %w", err)
	}
	return nil
}

// stagedRows are the rows of staged for rs, made (normalized) on every
// core: a batch stages up to a quarter of a million rows, and the
// database waits for them.
func stagedRows(rs []stagedRow) ([][]any, error) {
	out := make([][]any, len(rs))
	parts := max(1, min(runtime.GOMAXPROCS(0), len(rs)/1000))
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for k := range parts {
		lo, hi := k*len(rs)/parts, (k+1)*len(rs)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				if out[i], errs[k] = stagedValues(rs[i]); errs[k] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// stagedValues is the row of staged for r.
func stagedValues(r stagedRow) ([]any, error) {
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
}

func loadStarted(ctx context.Context, tx pgx.Tx, e projections.Event, p *records.LayerLoadStarted) error {
	v := *p
	if _, err := tx.Exec(ctx, `INSERT INTO loads (load_id, layer, counties, source_url, source_date, file, crawled_at, started_at, status, position)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'started', $9)`,
		v.LoadID, string(v.Layer), v.Counties, v.SourceURL, v.SourceDate, v.File, v.CrawledAt, v.StartedAt, int64(e.Position)); err != nil {
		return fmt.Errorf("event %d: recording load start: %w", e.Position, err)
	}
	return nil
}

func (b *batch) rowsLoaded(_ context.Context, _ pgx.Tx, _ projections.Event, p *records.LayerRowsLoaded) error {
	for _, r := range p.Rows {
		b.staged = append(b.staged, stagedRow{load: p.LoadID, Row: r})
	}
	return nil
}

func (b *batch) loadCompleted(ctx context.Context, tx pgx.Tx, e projections.Event, p *records.LayerLoadCompleted) error {
	v := *p
	if err := b.flush(ctx, tx); err != nil {
		return err
	}
	if err := completeLoad(ctx, tx, b.log, v, int64(e.Position)); err != nil {
		return fmt.Errorf("event %d: completing load %s: %w", e.Position, v.LoadID, err)
	}
	return nil
}

func (b *batch) loadFailed(ctx context.Context, tx pgx.Tx, e projections.Event, p *records.LayerLoadFailed) error {
	v := *p
	if err := b.flush(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM staged WHERE load_id = $1`, v.LoadID); err != nil {
		return fmt.Errorf("event %d: %w", e.Position, err)
	}
	if _, err := tx.Exec(ctx, `UPDATE loads SET status = 'failed', reason = $2, finished_at = $3, position = $4 WHERE load_id = $1`,
		v.LoadID, v.Reason, v.FailedAt, int64(e.Position)); err != nil {
		return fmt.Errorf("event %d: %w", e.Position, err)
	}
	return nil
}

func (b *batch) listRowsImported(_ context.Context, _ pgx.Tx, _ projections.Event, p *records.ListRowsImported) error {
	for _, r := range p.Rows {
		b.watched = append(b.watched, watchRow{list: p.ListID, account: p.AccountID, ListRow: r})
	}
	return nil
}

// maxTxWork bounds, in bytes of row JSON, the work the live runner puts
// in one transaction: about 250,000 staged rows, or the publishing of a
// load of that size. A bigger load is staged over several transactions
// and published alone in one.
const maxTxWork = 32 << 20

// publishBytesPerRow estimates a completed load's publishing work per row,
// in the units of maxTxWork.
const publishBytesPerRow = 128

// cut is the projection's Spec.Cut: row chunks weigh their JSON, a
// completed load its rows; a batch ends before the event that would pass
// maxTxWork.
func cut(events []eventstore.Event) int {
	work := 0
	for i, e := range events {
		switch e.Type {
		case records.LayerRowsLoaded{}.EventType():
			work += len(e.Data)
		case records.LayerLoadCompleted{}.EventType():
			var v struct {
				RowsLoaded int `json:"rows_loaded"`
			}
			if json.Unmarshal(e.Data, &v) == nil {
				work += v.RowsLoaded * publishBytesPerRow
			}
		}
		if i > 0 && work > maxTxWork {
			return i
		}
	}
	return len(events)
}

// publishTimePerRow is the time a batch asks (Spec.BatchTimeout) per row
// of a completed load it publishes: a million rows get 200 s, which a
// busy machine needs, rather than the runner's default minute, which
// rolled the first publishing of a million rows back and retried it from
// scratch.
const publishTimePerRow = 200 * time.Microsecond

// batchTimeout is the projection's Spec.BatchTimeout: publishTimePerRow
// per row of the loads the batch completes.
func batchTimeout(events []eventstore.Event) time.Duration {
	rows := 0
	for _, e := range events {
		if e.Type != (records.LayerLoadCompleted{}).EventType() {
			continue
		}
		var v struct {
			RowsLoaded int `json:"rows_loaded"`
		}
		if json.Unmarshal(e.Data, &v) == nil {
			rows += v.RowsLoaded
		}
	}
	return time.Duration(rows) * publishTimePerRow
}

// signalSQL renders one parcel_layers row (aliased %[1]s) as an element of
// parcels.signals.
const signalSQL = `jsonb_build_object(
    'layer', %[1]s.layer,
    'source_date', to_char(%[1]s.source_date, 'YYYY-MM-DD'),
    'record_date', to_char(%[1]s.record_date, 'YYYY-MM-DD'),
    'first_seen', to_char(%[1]s.first_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
    'last_seen', to_char(%[1]s.last_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
    'last_crawl', to_char(%[1]s.last_crawl AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
    'source_url', %[1]s.source_url)`

// loadSignalSQL is signalSQL for a row of load_parcels, with what is the
// same for the whole load formatted once ($2 layer, $3 source date, $4
// crawl time): the same JSON, without three timestamp renderings per row.
const loadSignalSQL = `jsonb_build_object(
    'layer', $2::text,
    'source_date', $3::text,
    'record_date', to_char(lp.record_date, 'YYYY-MM-DD'),
    'first_seen', CASE WHEN lp.first_seen = lp.last_seen THEN $4::text
                       ELSE to_char(lp.first_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') END,
    'last_seen', $4::text,
    'last_crawl', $4::text,
    'source_url', lp.source_url)`

// signalTime is signalSQL's timestamp format in Go.
const signalTime = "2006-01-02T15:04:05Z"

// completeLoad publishes a completed load's staged rows in the caller's
// transaction: the parcels it names are (again) named by its layer, with
// first/last seen; parcels of its counties it does not name stop being
// named (last_seen stays). It reads the stage once: one sort makes one row
// per parcel (in a temporary table, never WAL-logged) with its layer
// record, its parcel fields and its rendered signals, and each read-model
// row is then written once. New parcels are written in spatial order (the
// geometry's sort order is a space-filling curve), so a bbox query finds a
// box's parcels on few pages and the GiST index is filled locally. Into
// a table empty at the start (a county's first load) rows are inserted
// without its indexes, built after the fill (bulk.go). With -load-steps
// the records bench logs each step's time (Projection.Logger).
func completeLoad(ctx context.Context, tx pgx.Tx, log *slog.Logger, v records.LayerLoadCompleted, pos int64) error {
	var sourceURL string
	var sourceDate time.Time
	if err := tx.QueryRow(ctx, `SELECT source_url, source_date FROM loads WHERE load_id = $1`, v.LoadID).Scan(&sourceURL, &sourceDate); err != nil {
		return fmt.Errorf("the load's start: %w", err)
	}
	layer := string(v.Layer)
	// The layers other than this one that name parcels: those of completed
	// loads (a short list the partial index on (layer, county) serves).
	var otherLayers []string
	if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(DISTINCT layer), '{}') FROM loads WHERE status = 'completed' AND layer <> $1`, layer).Scan(&otherLayers); err != nil {
		return fmt.Errorf("the other layers: %w", err)
	}
	step := stepTimer(log)
	bulk, err := startBulkFill(ctx, tx)
	if err != nil {
		return err
	}
	step("dropping the empty tables' indexes")
	for _, s := range publishStatements(v, pos, layer, sourceURL, sourceDate, otherLayers, bulk) {
		if _, err := tx.Exec(ctx, s.sql, s.args...); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
		step(s.what)
	}
	if err := bulk.finish(ctx, tx, log); err != nil {
		return err
	}
	step("index builds")
	if err := makeDeliveries(ctx, tx, v, pos); err != nil {
		return fmt.Errorf("list monitors' deliveries: %w", err)
	}
	if err := finishLoad(ctx, tx, v, pos); err != nil {
		return err
	}
	step("deliveries and the load's figures")
	// The planner's statistics of the tables a load rewrote, made now in
	// the load's transaction (ANALYZE counts the rows it inserted), so the
	// first searches after it are planned on what the tables hold: before,
	// an APN look-up after a bulk load took 0.5 s until autovacuum came by.
	if _, err := tx.Exec(ctx, `ANALYZE parcels, parcel_layers, tile_cells`); err != nil {
		return fmt.Errorf("analyzing the tables the load changed: %w", err)
	}
	step("ANALYZE")
	return nil
}

// stepTimer returns a function that logs (at debug level) the time since
// its last call, or since stepTimer, as the time of the step it names.
func stepTimer(log *slog.Logger) func(what string) {
	last := time.Now()
	return func(what string) {
		now := time.Now()
		log.Debug("parcels load step", "step", what, "seconds", now.Sub(last).Seconds())
		last = now
	}
}

// statement is one statement of a load's publishing.
type statement struct {
	what string
	sql  string
	args []any
}

// publishStatements are the statements that publish a completed load,
// in order; into a table empty at the start (bulk), rows are inserted
// without ON CONFLICT.
func publishStatements(v records.LayerLoadCompleted, pos int64, layer, sourceURL string, sourceDate time.Time, otherLayers []string, bulk bulkFill) []statement {
	nameParcels, upsertParcels := nameParcelsSQL+nameParcelsConflictSQL, upsertParcelsSQL+upsertParcelsConflictSQL
	if bulk.empty["parcel_layers"] {
		nameParcels = nameParcelsSQL
	}
	if bulk.empty["parcels"] {
		upsertParcels = upsertParcelsSQL
	}
	others := statement{"collecting the other layers' signals", fmt.Sprintf(othersSQL, fmt.Sprintf(signalSQL, "o")), []any{otherLayers, v.Counties}}
	if bulk.empty["parcel_layers"] || len(otherLayers) == 0 {
		others = statement{"collecting the other layers' signals", noOthersSQL, nil}
	}
	dropParcels := statement{"dropping parcels the load no longer names", dropParcelsSQL, []any{v.LoadID, layer, v.Counties, v.CrawledAt, pos}}
	if bulk.empty["parcel_layers"] {
		dropParcels = statement{"dropping parcels the load no longer names", noDroppedParcelsSQL, nil}
	}
	return append([]statement{
		// Sorts of a million rows stay in memory; JIT compiling costs more
		// than it saves on these plans.
		{"settings", `SELECT set_config('work_mem', '256MB', true), set_config('jit', 'off', true)`, nil},
		{"dropping the last load's work tables", `DROP TABLE IF EXISTS pg_temp.load_parcels, pg_temp.load_others, pg_temp.load_dropped, pg_temp.load_cells`, nil},
		// One row per parcel, in key order: the layer record comes from
		// its last row (max record date, summed amounts, row count over
		// all its rows), the parcel's fields from its last row with
		// coordinates (p_line; fixed up below when that is not the last
		// row), first_seen from the layer's earlier record of it.
		{"one row per parcel", loadParcelsSQL,
			[]any{v.LoadID, layer, v.CrawledAt, sourceDate, sourceURL}},
		{"taking parcel fields from the last row with coordinates", lastRowFieldsSQL,
			[]any{v.LoadID, sourceURL}},
		{"naming parcels", nameParcels,
			[]any{v.LoadID, pos}},
		// (None when parcel_layers was empty: the table is still made.)
		dropParcels,
		// Signals of the other layers naming the load's parcels or the
		// parcels it dropped; usually few or none.
		others,
		{"upserting parcels", fmt.Sprintf(upsertParcels, loadSignalSQL),
			[]any{pos, layer, sourceDate.Format(time.DateOnly), v.CrawledAt.UTC().Format(signalTime)}},
		{"rendering the dropped parcels' signals", droppedSignalsSQL,
			[]any{pos}},
	}, cellStatements(v.Counties)...)
}

// finishLoad records a completed load's figures and clears its stage.
func finishLoad(ctx context.Context, tx pgx.Tx, v records.LayerLoadCompleted, pos int64) error {
	var withoutGeom, parcels int
	if err := tx.QueryRow(ctx, `SELECT coalesce(sum(rows_without_geometry), 0), count(*) FROM load_parcels`).Scan(&withoutGeom, &parcels); err != nil {
		return fmt.Errorf("counting the load's parcels: %w", err)
	}
	if err := clearStage(ctx, tx, v.LoadID); err != nil {
		return err
	}
	rejects, _ := json.Marshal(v.Rejects)
	_, err := tx.Exec(ctx, `UPDATE loads SET status = 'completed', finished_at = $2, rows_read = $3, rows_loaded = $4, rows_skipped = $5,
		rows_rejected = $6, rows_without_geometry = $7, parcels = $8, rejects = $9, position = $10 WHERE load_id = $1`,
		v.LoadID, v.CompletedAt, v.RowsRead, v.RowsLoaded, v.RowsSkipped, v.RowsRejected, withoutGeom, parcels, rejects, pos)
	return err
}

// The statements completeLoad runs, in order.
const (
	// loadParcelsSQL: one row per parcel. The window's frame is the whole
	// parcel, in the order DISTINCT ON takes: one sort serves both.
	loadParcelsSQL = `
CREATE TEMP TABLE load_parcels ON COMMIT DROP AS
SELECT s.*, coalesce(pl.first_seen, s.last_seen) AS first_seen, pl.named AS was_named
FROM (
    SELECT DISTINCT ON (county, apn) county, apn, line, lender, detail, address,
        apn_norm, address AS p_address, norm_address, lon, lat, coalesce(source_url, $5) AS p_source_url,
        $2::text AS layer, $3::timestamptz AS last_seen, $3::timestamptz AS last_crawl, $4::date AS source_date,
        coalesce(source_url, $5) AS source_url,
        max(record_date) OVER w AS record_date, sum(amount_micros) OVER w AS amount_micros, count(*) OVER w AS record_count,
        count(*) FILTER (WHERE lon IS NULL) OVER w AS rows_without_geometry,
        max(line) FILTER (WHERE lon IS NOT NULL) OVER w AS p_line
    FROM staged WHERE load_id = $1
    WINDOW w AS (PARTITION BY county, apn ORDER BY line DESC ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
    ORDER BY county, apn, line DESC
) s
LEFT JOIN parcel_layers pl ON pl.county = s.county AND pl.apn = s.apn AND pl.layer = $2
ORDER BY s.county, s.apn`
	// lastRowFieldsSQL: taking parcel fields from the last row with coordinates.
	lastRowFieldsSQL = `
UPDATE load_parcels lp SET apn_norm = st.apn_norm, p_address = st.address, norm_address = st.norm_address,
    lon = st.lon, lat = st.lat, p_source_url = coalesce(st.source_url, $2)
FROM staged st
WHERE lp.p_line IS NOT NULL AND lp.p_line <> lp.line
  AND st.load_id = $1 AND st.county = lp.county AND st.apn = lp.apn AND st.line = lp.p_line`
	// nameParcelsSQL: naming parcels.
	nameParcelsSQL = `
INSERT INTO parcel_layers AS pl (county, apn, layer, named, first_seen, last_seen, last_crawl, source_date, source_url,
    record_date, amount_micros, record_count, lender, address, detail, load_id, position)
SELECT county, apn, layer, true, first_seen, last_seen, last_crawl, source_date, source_url,
    record_date, amount_micros, record_count, lender, address, detail, $1, $2
FROM load_parcels`
	// nameParcelsConflictSQL: naming parcels, when parcel_layers may hold them.
	nameParcelsConflictSQL = `
ON CONFLICT (county, apn, layer) DO UPDATE SET named = true, last_seen = excluded.last_seen, last_crawl = excluded.last_crawl,
    source_date = excluded.source_date, source_url = excluded.source_url, record_date = excluded.record_date,
    amount_micros = excluded.amount_micros, record_count = excluded.record_count, lender = excluded.lender,
    address = excluded.address, detail = excluded.detail, load_id = excluded.load_id, position = excluded.position`
	// dropParcelsSQL: dropping parcels the load no longer names.
	dropParcelsSQL = `
CREATE TEMP TABLE load_dropped ON COMMIT DROP AS
WITH d AS (
    UPDATE parcel_layers SET named = false, last_crawl = $4, position = $5
    WHERE layer = $2 AND county = ANY($3) AND named AND load_id <> $1
    RETURNING county, apn)
SELECT * FROM d`
	// noDroppedParcelsSQL: dropParcelsSQL's table, empty (the load's
	// parcel_layers were empty: it dropped nothing).
	noDroppedParcelsSQL = `
CREATE TEMP TABLE load_dropped ON COMMIT DROP AS
SELECT county, apn FROM parcel_layers WITH NO DATA`
	// noOthersSQL: othersSQL's table, empty (no other layer names
	// parcels).
	noOthersSQL = `
CREATE TEMP TABLE load_others ON COMMIT DROP AS
SELECT county, apn, '{}'::text[] AS layers, '[]'::jsonb AS signals, '{}'::date[] AS dates FROM parcel_layers WITH NO DATA`
	// droppedSignalsSQL: rendering the dropped parcels' signals.
	droppedSignalsSQL = `
UPDATE parcels p SET layers = coalesce(o.layers, '{}'), signals = coalesce(o.signals, '[]'), layer_dates = coalesce(o.dates, '{}'), position = $1
FROM load_dropped d LEFT JOIN load_others o ON o.county = d.county AND o.apn = d.apn
WHERE p.county = d.county AND p.apn = d.apn`
	// othersSQL: the other layers' signals (%s: their signal, rendered).
	othersSQL = `
CREATE TEMP TABLE load_others ON COMMIT DROP AS
SELECT o.county, o.apn, array_agg(o.layer ORDER BY o.layer) AS layers, jsonb_agg(%s ORDER BY o.layer) AS signals,
    array_agg(coalesce(o.record_date, o.source_date) ORDER BY o.layer) AS dates
FROM parcel_layers o
WHERE o.named AND o.layer = ANY($1) AND o.county = ANY($2)
GROUP BY o.county, o.apn`
	// upsertParcelsSQL: the load's parcels upserted (%[1]s: the load's
	// signal, rendered). A load's signals differ only by record date,
	// source URL and first seen, of which a load has few combinations:
	// each is rendered once (s), not once a parcel (rendering a million
	// signals took longer than writing them). The parcels are sorted in
	// spatial order with their narrow fields only (lp), then joined to
	// their signals (hash joins keep the sorted side's order).
	upsertParcelsSQL = `
WITH s AS MATERIALIZED (
    SELECT coalesce(lp.record_date, 'infinity') AS record_key, lp.source_url, lp.first_seen,
        jsonb_build_array(%[1]s) AS signals
    FROM (SELECT DISTINCT record_date, source_url, first_seen, last_seen FROM load_parcels) lp)
INSERT INTO parcels AS p (county, apn, apn_norm, address, norm_address, geom, source_url, layers, signals, layer_dates, position)
SELECT lp.county, lp.apn, lp.apn_norm, lp.p_address, lp.norm_address, lp.geom, lp.p_source_url,
    CASE WHEN o.county IS NULL THEN ARRAY[lp.layer]
         ELSE (SELECT array_agg(l ORDER BY l COLLATE "C") FROM unnest(o.layers || lp.layer) l) END,
    CASE WHEN o.county IS NULL THEN s.signals
         ELSE (SELECT jsonb_agg(e ORDER BY e->>'layer' COLLATE "C") FROM jsonb_array_elements(o.signals || s.signals) e) END,
    ` + layerDatesSQL + `,
    $1
FROM (
    SELECT lp.county, lp.apn, lp.apn_norm, lp.p_address, lp.norm_address, lp.p_source_url, lp.layer, lp.record_date, lp.source_date,
        lp.source_url, lp.first_seen, CASE WHEN lp.lon IS NOT NULL THEN ST_SetSRID(ST_MakePoint(lp.lon, lp.lat), 4326) END AS geom
    FROM load_parcels lp
    ORDER BY geom NULLS LAST, lp.county, lp.apn
    OFFSET 0) lp
JOIN s ON s.record_key = coalesce(lp.record_date, 'infinity') AND s.source_url = lp.source_url AND s.first_seen = lp.first_seen
LEFT JOIN load_others o ON o.county = lp.county AND o.apn = lp.apn`
	// upsertParcelsConflictSQL: the load's parcels upserted, when parcels may hold them.
	upsertParcelsConflictSQL = `
ON CONFLICT (county, apn) DO UPDATE SET
    address = CASE WHEN excluded.address <> '' THEN excluded.address ELSE p.address END,
    norm_address = CASE WHEN excluded.address <> '' THEN excluded.norm_address ELSE p.norm_address END,
    geom = coalesce(excluded.geom, p.geom), source_url = excluded.source_url,
    layers = excluded.layers, signals = excluded.signals, layer_dates = excluded.layer_dates, position = excluded.position`
)

// layerDatesSQL is a load's parcel's layer_dates (the tiles' column,
// tiles.go): beside layers and in its order, the newest date of each layer
// naming the parcel, its record's date, else its load's source date, as
// records.Motivation takes it; written with the row (an UPDATE after the
// load would write every row twice).
const layerDatesSQL = `CASE WHEN o.county IS NULL THEN ARRAY[coalesce(lp.record_date, lp.source_date)]
         ELSE (SELECT array_agg(d ORDER BY l COLLATE "C") FROM unnest(o.layers || lp.layer, o.dates || coalesce(lp.record_date, lp.source_date)) x(l, d)) END`

// clearStage deletes a load's staged rows; when no other load is staged it
// truncates the stage instead, which leaves no dead rows behind.
func clearStage(ctx context.Context, tx pgx.Tx, load uuid.UUID) error {
	var others bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM staged WHERE load_id < $1 OR load_id > $1)`, load).Scan(&others); err != nil {
		return fmt.Errorf("clearing the stage: %w", err)
	}
	sql := `TRUNCATE staged`
	if others {
		sql = `DELETE FROM staged WHERE load_id = $1`
	}
	var args []any
	if others {
		args = []any{load}
	}
	if _, err := tx.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("clearing the stage: %w", err)
	}
	return nil
}

// keyRules names, in the DDL, the rules that made the keys the read model
// stores (records.KeyRules): a change of them changes the DDL's hash, and
// the runner rebuilds the read model with keys made by the new rules.
func keyRules() string { return "\n-- match keys made by rules " + records.KeyRules() + "\n" }
