package projections

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain/text"
)

// DefaultParkedLimit is the page size of ListParked when none is given,
// and MaxParkedLimit the largest it takes.
const (
	DefaultParkedLimit = 100
	MaxParkedLimit     = 10000
)

// ParkedQuery selects a page of parked events: those of Projection (""
// for every projection) after position After, in position order, at most
// Limit (0: DefaultParkedLimit).
type ParkedQuery struct {
	Projection string
	After      uint64
	Limit      int
}

// ParkedPage is one page of parked events with the true count of all of
// them.
type ParkedPage struct {
	// Events are the page's events, by position (then projection).
	Events []ParkedEvent `json:"parked"`
	// Total counts every parked event of the query's projection (or of
	// all), not only this page.
	Total int64 `json:"total"`
	// NextAfter is the After of the next page; nil on the last page.
	NextAfter *uint64 `json:"next_after"`
}

// ListParked returns a page of parked events, keyset-paged by position
// (stable while events are parked and retried meanwhile), and the total,
// read in one snapshot. Listing every projection, a page holds all the
// events parked at its last position, so it may be longer than Limit by
// the other projections parked at that position. Safe for concurrent use.
func ListParked(ctx context.Context, pool *pgxpool.Pool, q ParkedQuery) (ParkedPage, error) {
	if q.Limit == 0 {
		q.Limit = DefaultParkedLimit
	}
	if q.Limit < 0 || q.Limit > MaxParkedLimit {
		return ParkedPage{}, fmt.Errorf("listing parked events: limit %d is not in 1..%d", q.Limit, MaxParkedLimit)
	}
	var page ParkedPage
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		if page.Total, err = countParked(ctx, tx, q.Projection); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `WITH cut AS (
				SELECT position FROM projection_parked WHERE cleared_at IS NULL AND ($1 = '' OR projection = $1) AND position > $2 ORDER BY position LIMIT $3)
			SELECT projection, position, event_id::text, event_type, error, attempts, parked_at, retried_at
			FROM projection_parked WHERE cleared_at IS NULL AND ($1 = '' OR projection = $1) AND position > $2 AND position <= (SELECT max(position) FROM cut)
			ORDER BY position, projection`, q.Projection, int64(q.After), q.Limit)
		if err != nil {
			return err
		}
		if page.Events, err = pgx.CollectRows(rows, scanParked); err != nil {
			return err
		}
		if len(page.Events) == 0 {
			return nil
		}
		last := page.Events[len(page.Events)-1].Position
		var more bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projection_parked WHERE cleared_at IS NULL AND ($1 = '' OR projection = $1) AND position > $2)`,
			q.Projection, int64(last)).Scan(&more); err != nil {
			return err
		}
		if more {
			page.NextAfter = &last
		}
		return nil
	})
	if err != nil {
		return ParkedPage{}, fmt.Errorf("listing parked events: %w", err)
	}
	return page, nil
}

func scanParked(row pgx.CollectableRow) (ParkedEvent, error) {
	var pe ParkedEvent
	var pos int64
	err := row.Scan(&pe.Projection, &pos, &pe.EventID, &pe.EventType, &pe.Error, &pe.Attempts, &pe.ParkedAt, &pe.RetriedAt)
	// A SQL projection's session may write its own rows (migration
	// 00060): what is read back is cleaned as arr cleans what it writes.
	pe.Error, pe.EventType = truncate(text.Clean(pe.Error), 2000), truncate(text.Clean(pe.EventType), 200)
	pe.Position, pe.ParkedAt = uint64(pos), pe.ParkedAt.UTC()
	if pe.RetriedAt != nil {
		t := pe.RetriedAt.UTC()
		pe.RetriedAt = &t
	}
	return pe, err
}

// CountParked counts the events projection name has parked ("" for every
// projection). Safe for concurrent use.
func CountParked(ctx context.Context, pool *pgxpool.Pool, name string) (int64, error) {
	n, err := countParked(ctx, pool, name)
	if err != nil {
		return 0, fmt.Errorf("counting parked events: %w", err)
	}
	return n, nil
}

// rowQuerier is a pool or a transaction.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func countParked(ctx context.Context, q rowQuerier, name string) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, `SELECT count(*) FROM projection_parked WHERE cleared_at IS NULL AND ($1 = '' OR projection = $1)`, name).Scan(&n)
	return n, err
}
