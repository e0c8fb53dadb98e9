package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/eventstore"
)

const selectColumns = `position, event_id, stream_id, stream_version, event_type, schema_version, data::text,
	coalesce(correlation_id, ''), coalesce(causation_id, ''), coalesce(actor, ''), coalesce(request_id, ''), recorded_at`

// ReadAll reads the log after a position, in order. Because positions are
// assigned under one lock in commit order, what a snapshot sees is always a
// prefix of the log: nothing committed later can appear below it.
func (s *Store) ReadAll(ctx context.Context, after uint64, limit int) ([]eventstore.Event, error) {
	if limit <= 0 {
		limit = eventstore.DefaultBatch
	}
	rows, err := s.pool.Query(ctx, `SELECT `+selectColumns+` FROM events WHERE position > $1 ORDER BY position LIMIT $2`, int64(after), limit)
	if err != nil {
		return nil, fmt.Errorf("reading log after %d: %w", after, err)
	}
	return scanEvents(rows, limit)
}

// ReadAllOfTypes implements eventstore.TypeReader in one round trip: it
// reads the head, then the events of the types after `after` up to a head
// no lower (a later snapshot sees a longer prefix of the log, never a
// shorter one). If fewer than limit events come back, the read covered the
// log up to the head it read first, or to its last event if that is later.
func (s *Store) ReadAllOfTypes(ctx context.Context, after uint64, limit int, types []string) ([]eventstore.Event, uint64, error) {
	if limit <= 0 {
		limit = eventstore.DefaultBatch
	}
	var head int64
	var events []eventstore.Event
	var scanErr error
	b := &pgx.Batch{}
	b.Queue(`SELECT position FROM event_log_head`).QueryRow(func(row pgx.Row) error { return row.Scan(&head) })
	b.Queue(`SELECT `+selectColumns+` FROM events WHERE position > $1 AND position <= (SELECT position FROM event_log_head)
		AND event_type = ANY($2) ORDER BY position LIMIT $3`, int64(after), types, limit).Query(func(rows pgx.Rows) error {
		events, scanErr = scanEvents(rows, limit)
		return scanErr
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, after, fmt.Errorf("reading log after %d for %d event types: %w", after, len(types), err)
	}
	if scanErr != nil {
		return nil, after, scanErr
	}
	upTo := max(uint64(head), after)
	if n := len(events); n > 0 && (n == limit || events[n-1].Position > upTo) {
		upTo = events[n-1].Position
	}
	return events, upTo, nil
}

// ReadStream reads one stream forward or backward.
func (s *Store) ReadStream(ctx context.Context, streamID string, o eventstore.ReadStreamOptions) ([]eventstore.Event, error) {
	limit := o.Limit
	if limit <= 0 {
		limit = eventstore.DefaultBatch
	}
	var rows pgx.Rows
	var err error
	switch {
	case !o.Backward:
		rows, err = s.pool.Query(ctx, `SELECT `+selectColumns+` FROM events WHERE stream_id = $1 AND stream_version >= $2 ORDER BY stream_version LIMIT $3`, streamID, int64(o.From), limit)
	case o.FromEnd:
		rows, err = s.pool.Query(ctx, `SELECT `+selectColumns+` FROM events WHERE stream_id = $1 ORDER BY stream_version DESC LIMIT $2`, streamID, limit)
	default:
		rows, err = s.pool.Query(ctx, `SELECT `+selectColumns+` FROM events WHERE stream_id = $1 AND stream_version <= $2 ORDER BY stream_version DESC LIMIT $3`, streamID, int64(o.From), limit)
	}
	if err != nil {
		return nil, fmt.Errorf("reading stream %s: %w", streamID, err)
	}
	return scanEvents(rows, limit)
}

func scanEvents(rows pgx.Rows, capacity int) ([]eventstore.Event, error) {
	defer rows.Close()
	out := make([]eventstore.Event, 0, min(capacity, 64))
	for rows.Next() {
		var e eventstore.Event
		var pos, ver int64
		var data []byte
		m := &e.Metadata
		if err := rows.Scan(&pos, &e.ID, &e.StreamID, &ver, &e.Type, &e.SchemaVersion, &data,
			&m.CorrelationID, &m.CausationID, &m.Actor, &m.RequestID, &e.RecordedAt); err != nil {
			return nil, fmt.Errorf("scanning event: %w", err)
		}
		e.Position, e.StreamVersion, e.Data = uint64(pos), uint64(ver), data
		e.RecordedAt = e.RecordedAt.UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	return out, nil
}
