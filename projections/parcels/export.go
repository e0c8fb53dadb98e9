package parcels

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arr-dev/arr/domain/records"
	"github.com/arr-dev/arr/projections"
)

// ExportQuery is one export: a county's parcels, those named by any of
// Layers (every parcel of the county when empty).
type ExportQuery struct {
	County string
	Layers []string
	// PageSize is how many parcels one fetch of the export's cursor
	// reads (default 2,000).
	PageSize int
	// StatementTimeout stops each statement of the export on the server
	// (required): the export is many short fetches, none holds the
	// database long.
	StatementTimeout time.Duration
	// IdleTimeout ends the export's transaction on the server when it
	// waits longer than this between two queries (a client that stopped
	// reading); default 2 minutes.
	IdleTimeout time.Duration
}

// ExportSink receives an export: its header once, then its parcels page
// by page, in APN order. An error it returns ends the export.
type ExportSink interface {
	Begin(h records.ExportHeader) error
	Write(page []records.ExportParcel) error
}

const defaultExportPage = 2000

// Export reads a county's parcels with the records of the layers naming
// them into sink, all from one snapshot of one set of tables: one
// read-only REPEATABLE READ transaction, so the count, the layers and
// every page agree however long the export takes and whatever loads
// complete meanwhile, and one server-side cursor, bound to the tables
// when it is declared, so a rebuild that swaps in a new schema meanwhile
// changes nothing in it (see pinned). The parcels are fetched from the
// cursor in pages of q.PageSize by APN (the primary key's order), each
// fetch one statement under q.StatementTimeout. A statement stopped at
// its limit fails with projections.QueryTimeout. An export that sends
// fewer or more parcels than its header counts fails (errShort), so its
// caller can cut the answer off rather than end a file that looks whole.
func (qs *Queries) Export(ctx context.Context, q ExportQuery, sink ExportSink) (err error) {
	if q.StatementTimeout <= 0 {
		return errors.New("export: no statement timeout")
	}
	if q.PageSize <= 0 {
		q.PageSize = defaultExportPage
	}
	if q.IdleTimeout <= 0 {
		q.IdleTimeout = 2 * time.Minute
	}
	defer func() {
		err = exportError(ctx, q.StatementTimeout, err)
		if err != nil {
			err = fmt.Errorf("export of county %s: %w", q.County, err)
		}
	}()
	for attempt := 1; ; attempt++ {
		tx, h, err := qs.openExport(ctx, q)
		if errors.Is(err, errSwapped) && attempt < exportAttempts {
			continue // nothing is sent yet: take the snapshot again
		}
		if err != nil {
			return err
		}
		defer tx.Rollback(context.Background()) //nolint:errcheck // read-only: nothing to keep
		return sendExport(ctx, tx, q, h, sink)
	}
}

// exportAttempts bounds how many times an export takes its snapshot
// again when a rebuild swapped the read model while it was taken.
const exportAttempts = 3

// errSwapped is a snapshot taken while a rebuild swapped the read model
// in: its statements did not all read the tables the snapshot names.
var errSwapped = errors.New("the read model was swapped while its snapshot was taken")

// openExport begins an export's transaction, reads its header and
// declares its cursor, and checks that they read the tables of the
// snapshot (pinned); the caller rolls the transaction back.
func (qs *Queries) openExport(ctx context.Context, q ExportQuery) (_ pgx.Tx, _ records.ExportHeader, err error) {
	tx, err := qs.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, records.ExportHeader{}, fmt.Errorf("beginning the snapshot: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.Background())
		}
	}()
	ms := func(d time.Duration) string { return strconv.FormatInt(max(1, d.Milliseconds()), 10) }
	if _, err := tx.Exec(ctx, `SELECT set_config('statement_timeout', $1, true), set_config('idle_in_transaction_session_timeout', $2, true)`,
		ms(q.StatementTimeout), ms(q.IdleTimeout)); err != nil {
		return nil, records.ExportHeader{}, fmt.Errorf("limits: %w", err)
	}
	h, err := exportHeader(ctx, tx, q)
	if err != nil {
		return nil, h, err
	}
	cond, args := exportCond(q)
	if _, err := tx.Exec(ctx, fmt.Sprintf(exportCursorSQL, cond), args...); err != nil {
		return nil, h, fmt.Errorf("declaring the cursor: %w", err)
	}
	if err := pinned(ctx, tx); err != nil {
		return nil, h, err
	}
	return tx, h, nil
}

// pinned checks that every table and index tx has read (every relation
// it holds a lock on, past the system catalogs) is in the schema
// rm_parcels as tx's snapshot sees the catalog. A rebuild renames the
// live schema away and its shadow in while readers run (rebuild.go), and
// a statement resolves a name when it starts, not as of the snapshot:
// a statement of tx that began after a swap committed read the new
// tables, which the snapshot does not see in rm_parcels (they were in
// the shadow schema, or not yet made), and fails this check. Once it
// passes, the cursor holds its tables to the end, whatever is renamed.
func pinned(ctx context.Context, tx pgx.Tx) error {
	var stray int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_catalog.pg_locks l
		LEFT JOIN pg_catalog.pg_class c ON c.oid = l.relation LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE l.pid = pg_catalog.pg_backend_pid() AND l.locktype = 'relation' AND l.relation >= 16384
		AND n.nspname IS DISTINCT FROM 'rm_parcels'`).Scan(&stray); err != nil {
		return fmt.Errorf("checking the snapshot's tables: %w", err)
	}
	if stray > 0 {
		return errSwapped
	}
	return nil
}

// sendExport sends an export whose header is h from tx's cursor to
// sink, page by page, and checks that it held h.Parcels parcels.
func sendExport(ctx context.Context, tx pgx.Tx, q ExportQuery, h records.ExportHeader, sink ExportSink) error {
	if err := sink.Begin(h); err != nil {
		return err
	}
	var sent int64
	for {
		page, err := exportPage(ctx, tx, q)
		if err != nil {
			return fmt.Errorf("after %d parcels: %w", sent, err)
		}
		if len(page) > 0 {
			if err := sink.Write(page); err != nil {
				return err
			}
		}
		sent += int64(len(page))
		if len(page) < q.PageSize {
			break
		}
	}
	if sent != h.Parcels {
		return fmt.Errorf("%w: %d parcels sent, the header counts %d", errShort, sent, h.Parcels)
	}
	return nil
}

// errShort is an export whose parcels are not as many as its header
// counts.
var errShort = errors.New("the export does not hold the parcels its header counts")

// exportError names the limit of a query stopped at its statement
// timeout.
func exportError(ctx context.Context, limit time.Duration, err error) error {
	var pgErr *pgconn.PgError
	if err != nil && errors.As(err, &pgErr) && pgErr.Code == "57014" && ctx.Err() == nil {
		return fmt.Errorf("%w (%w)", projections.QueryTimeout(limit), err)
	}
	return err
}

// exportHeader reads, in the snapshot, the parcels the export holds and
// the layers naming any parcel of the county (one probe of the partial
// index on (layer, county) per layer), of those q.Layers names when it
// names any; each parcel's score is of the default weights, as of the
// snapshot's day.
func exportHeader(ctx context.Context, tx pgx.Tx, q ExportQuery) (records.ExportHeader, error) {
	h := records.ExportHeader{County: q.County}
	sql := `SELECT count(*), now() FROM rm_parcels.parcels WHERE county = $1`
	args := []any{q.County}
	if len(q.Layers) > 0 {
		sql += ` AND layers && $2::text[]`
		args = append(args, q.Layers)
	}
	if err := tx.QueryRow(ctx, sql, args...).Scan(&h.Parcels, &h.At); err != nil {
		return h, fmt.Errorf("counting the parcels: %w", err)
	}
	h.At = h.At.UTC()
	keys := records.LayerKeys()
	if len(q.Layers) > 0 {
		keys = slices.DeleteFunc(keys, func(k string) bool { return !slices.Contains(q.Layers, k) })
	}
	if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(l ORDER BY l COLLATE "C"), '{}') FROM unnest($1::text[]) l
		WHERE EXISTS (SELECT 1 FROM rm_parcels.parcel_layers WHERE layer = l AND county = $2 AND named)`,
		keys, q.County).Scan(&h.Layers); err != nil {
		return h, fmt.Errorf("the layers naming its parcels: %w", err)
	}
	w, err := records.Weights("")
	if err != nil {
		return h, err
	}
	h.Weights, h.ScoreAsOf = w, h.At.Truncate(24*time.Hour)
	return h, nil
}

// exportCursorSQL declares the export's cursor (%s: the layers
// condition): the county's parcels by APN, one row each, with its named
// layer records as arrays in layer order.
const exportCursorSQL = `
DECLARE parcel_export NO SCROLL CURSOR FOR
SELECT p.apn, p.address, ST_X(p.geom), ST_Y(p.geom), p.source_url,
    s.layers, s.source_dates, s.record_dates, s.first_seen, s.last_seen, s.last_crawl, s.urls
FROM rm_parcels.parcels p
LEFT JOIN LATERAL (
    SELECT array_agg(pl.layer ORDER BY pl.layer) AS layers,
        array_agg(to_char(pl.source_date, 'YYYY-MM-DD') ORDER BY pl.layer) AS source_dates,
        array_agg(to_char(pl.record_date, 'YYYY-MM-DD') ORDER BY pl.layer) AS record_dates,
        array_agg(pl.first_seen ORDER BY pl.layer) AS first_seen, array_agg(pl.last_seen ORDER BY pl.layer) AS last_seen,
        array_agg(pl.last_crawl ORDER BY pl.layer) AS last_crawl, array_agg(pl.source_url ORDER BY pl.layer) AS urls
    FROM rm_parcels.parcel_layers pl WHERE pl.county = p.county AND pl.apn = p.apn AND pl.named) s ON true
WHERE p.county = $1 %s
ORDER BY p.apn`

// exportCond is the cursor's layers condition and arguments.
func exportCond(q ExportQuery) (string, []any) {
	if len(q.Layers) == 0 {
		return "", []any{q.County}
	}
	return `AND p.layers && $2::text[]`, []any{q.County, q.Layers}
}

// exportPage fetches the next page of the cursor.
func exportPage(ctx context.Context, tx pgx.Tx, q ExportQuery) ([]records.ExportParcel, error) {
	rows, err := tx.Query(ctx, `FETCH FORWARD `+strconv.Itoa(q.PageSize)+` FROM parcel_export`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	page := make([]records.ExportParcel, 0, q.PageSize)
	for rows.Next() {
		p := records.ExportParcel{County: q.County}
		var lon, lat *float64
		var layers, sourceDates, urls []string
		var recordDates []*string
		var firstSeen, lastSeen, lastCrawl []time.Time
		if err := rows.Scan(&p.APN, &p.Address, &lon, &lat, &p.SourceURL, &layers, &sourceDates, &recordDates,
			&firstSeen, &lastSeen, &lastCrawl, &urls); err != nil {
			return nil, err
		}
		if lon != nil && lat != nil {
			p.Placed, p.Lon, p.Lat = true, *lon, *lat
		}
		for i, l := range layers {
			s := records.ExportSignal{Layer: l, SourceDate: sourceDates[i], FirstSeen: firstSeen[i].UTC(), LastSeen: lastSeen[i].UTC(),
				LastCrawl: lastCrawl[i].UTC(), SourceURL: urls[i]}
			if recordDates[i] != nil {
				s.RecordDate = *recordDates[i]
			}
			p.Signals = append(p.Signals, s)
		}
		page = append(page, p)
	}
	return page, rows.Err()
}
