package parcels

import (
	"context"
	"errors"
	"fmt"
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
	// PageSize is how many parcels one query reads (default 2,000).
	PageSize int
	// StatementTimeout stops each query of the export on the server
	// (required): the export is many short queries, none holds the
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
// them into sink, all from one snapshot: one read-only REPEATABLE READ
// transaction, so the count, the layers and every page agree however
// long the export takes and whatever loads complete meanwhile. The
// parcels are read in keyset pages of q.PageSize by APN (the primary
// key's order), each page one query under q.StatementTimeout. A query
// stopped at its limit fails with projections.QueryTimeout.
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
	}()
	tx, err := qs.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("export of county %s: beginning the snapshot: %w", q.County, err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // read-only: nothing to keep
	ms := func(d time.Duration) string { return strconv.FormatInt(max(1, d.Milliseconds()), 10) }
	if _, err := tx.Exec(ctx, `SELECT set_config('statement_timeout', $1, true), set_config('idle_in_transaction_session_timeout', $2, true)`,
		ms(q.StatementTimeout), ms(q.IdleTimeout)); err != nil {
		return fmt.Errorf("export of county %s: limits: %w", q.County, err)
	}
	h, err := exportHeader(ctx, tx, q)
	if err != nil {
		return fmt.Errorf("export of county %s: %w", q.County, err)
	}
	if err := sink.Begin(h); err != nil {
		return err
	}
	after := ""
	for first := true; ; first = false {
		page, err := exportPage(ctx, tx, q, after, first)
		if err != nil {
			return fmt.Errorf("export of county %s after APN %q: %w", q.County, after, err)
		}
		if len(page) == 0 {
			return nil
		}
		if err := sink.Write(page); err != nil {
			return err
		}
		if len(page) < q.PageSize {
			return nil
		}
		after = page[len(page)-1].APN
	}
}

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
// index on (layer, county) per layer).
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
	if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(l ORDER BY l COLLATE "C"), '{}') FROM unnest($1::text[]) l
		WHERE EXISTS (SELECT 1 FROM rm_parcels.parcel_layers WHERE layer = l AND county = $2 AND named)`,
		records.LayerKeys(), q.County).Scan(&h.Layers); err != nil {
		return h, fmt.Errorf("the layers naming its parcels: %w", err)
	}
	return h, nil
}

// exportPageSQL reads one page: the next parcels by APN (%s: the keyset
// and layers conditions), each with its named layer records, in APN then
// layer order.
const exportPageSQL = `
SELECT p.apn, p.address, ST_X(p.geom), ST_Y(p.geom), p.source_url,
    pl.layer, to_char(pl.source_date, 'YYYY-MM-DD'), to_char(pl.record_date, 'YYYY-MM-DD'),
    pl.first_seen, pl.last_seen, pl.last_crawl, pl.source_url
FROM (SELECT county, apn, address, geom, source_url FROM rm_parcels.parcels
      WHERE county = $1 %s ORDER BY apn LIMIT $2) p
LEFT JOIN rm_parcels.parcel_layers pl ON pl.county = p.county AND pl.apn = p.apn AND pl.named
ORDER BY p.apn, pl.layer`

func exportPage(ctx context.Context, tx pgx.Tx, q ExportQuery, after string, first bool) ([]records.ExportParcel, error) {
	args := []any{q.County, q.PageSize}
	cond := ""
	if !first {
		args = append(args, after)
		cond += fmt.Sprintf(` AND apn > $%d`, len(args))
	}
	if len(q.Layers) > 0 {
		args = append(args, q.Layers)
		cond += fmt.Sprintf(` AND layers && $%d::text[]`, len(args))
	}
	rows, err := tx.Query(ctx, fmt.Sprintf(exportPageSQL, cond), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	page := make([]records.ExportParcel, 0, q.PageSize)
	for rows.Next() {
		var apn, address, url string
		var lon, lat *float64
		var layer, sourceDate, recordDate, layerURL *string
		var firstSeen, lastSeen, lastCrawl *time.Time
		if err := rows.Scan(&apn, &address, &lon, &lat, &url, &layer, &sourceDate, &recordDate, &firstSeen, &lastSeen, &lastCrawl, &layerURL); err != nil {
			return nil, err
		}
		if n := len(page); n == 0 || page[n-1].APN != apn {
			p := records.ExportParcel{County: q.County, APN: apn, Address: address, SourceURL: url}
			if lon != nil && lat != nil {
				p.Placed, p.Lon, p.Lat = true, *lon, *lat
			}
			page = append(page, p)
		}
		if layer == nil {
			continue
		}
		s := records.ExportSignal{Layer: *layer, SourceDate: *sourceDate, FirstSeen: firstSeen.UTC(), LastSeen: lastSeen.UTC(),
			LastCrawl: lastCrawl.UTC(), SourceURL: *layerURL}
		if recordDate != nil {
			s.RecordDate = *recordDate
		}
		p := &page[len(page)-1]
		p.Signals = append(p.Signals, s)
	}
	return page, rows.Err()
}
