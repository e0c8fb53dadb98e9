package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arr-dev/arr/eventstore"
)

// copyThreshold is the batch size from which COPY beats a multi-row INSERT.
const copyThreshold = 256

type stored struct {
	stream   string
	version  int64
	position int64
}

// commit writes the appends in one transaction. errs[i] is the append's own
// failure (a wrong expected version, a reused event id); err is a failure of
// the whole transaction, which then applies to every append without its own.
// all-or-nothing (bulk) turns any single failure into a failure of all.
func (s *Store) commit(ctx context.Context, appends []eventstore.Append, allOrNothing bool) ([]eventstore.AppendResult, []error, error) {
	results := make([]eventstore.AppendResult, len(appends))
	errs := make([]error, len(appends))

	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, errs, fmt.Errorf("append: begin: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // no-op after commit

	// The head row lock orders every writer in every process: positions are
	// handed out in the order transactions commit.
	var head int64
	var now time.Time
	if err := tx.QueryRow(ctx, `UPDATE event_log_head SET position = position WHERE id RETURNING position, clock_timestamp()`).Scan(&head, &now); err != nil {
		return nil, errs, fmt.Errorf("append: locking log head: %w", err)
	}

	var ids []uuid.UUID
	streamSet := map[string]struct{}{}
	var streams []string
	for _, a := range appends {
		for _, e := range a.Events {
			ids = append(ids, e.ID)
		}
		if _, ok := streamSet[a.StreamID]; !ok {
			streamSet[a.StreamID] = struct{}{}
			streams = append(streams, a.StreamID)
		}
	}
	existing := map[uuid.UUID]stored{}
	if !allOrNothing { // bulk appends find duplicates through the unique index instead
		if existing, err = lookupIDs(ctx, tx, ids); err != nil {
			return nil, errs, err
		}
	}
	versions := map[string]int64{}
	rows, err := tx.Query(ctx, `SELECT stream_id, version FROM event_streams WHERE stream_id = ANY($1)`, streams)
	if err != nil {
		return nil, errs, fmt.Errorf("append: reading stream versions: %w", err)
	}
	for rows.Next() {
		var id string
		var v int64
		if err := rows.Scan(&id, &v); err != nil {
			rows.Close()
			return nil, errs, fmt.Errorf("append: reading stream versions: %w", err)
		}
		versions[id] = v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, errs, fmt.Errorf("append: reading stream versions: %w", err)
	}

	cols := newColumns(len(ids))
	inBatch := map[uuid.UUID]int{} // event id -> index of the append that wrote it in this batch
	pos := head
	for i, a := range appends {
		if dup, ok, err := duplicateOf(a, existing, inBatch, results); err != nil {
			errs[i] = err
			continue
		} else if ok {
			results[i] = dup
			continue
		}
		cur, exists := versions[a.StreamID]
		if !a.Expected.Check(uint64(cur), exists) {
			errs[i] = &eventstore.WrongExpectedVersionError{StreamID: a.StreamID, Expected: a.Expected, Actual: uint64(max(cur, 0)), ActualExists: exists}
			continue
		}
		v := int64(-1)
		if exists {
			v = cur
		}
		r := eventstore.AppendResult{StreamID: a.StreamID, FirstVersion: uint64(v + 1), FirstPosition: uint64(pos + 1)}
		for _, e := range a.Events {
			v++
			pos++
			md, _ := json.Marshal(e.Metadata)
			cols.add(pos, e, a.StreamID, v, md, now)
			inBatch[e.ID] = i
		}
		r.LastVersion, r.LastPosition = uint64(v), uint64(pos)
		results[i] = r
		versions[a.StreamID] = v
	}
	if allOrNothing {
		for _, e := range errs {
			if e != nil {
				return nil, errs, e
			}
		}
	}
	if cols.n == 0 {
		return results, errs, tx.Commit(ctx)
	}

	if err := cols.insert(ctx, tx); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			return nil, errs, fmt.Errorf("append: %w", errDuplicateInsert)
		}
		return nil, errs, fmt.Errorf("append: inserting %d events: %w", cols.n, err)
	}
	var upStreams []string
	var upVersions []int64
	for _, id := range streams {
		if v, ok := versions[id]; ok {
			upStreams, upVersions = append(upStreams, id), append(upVersions, v)
		}
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO event_streams (stream_id, version, updated_at)
		SELECT s, v, $3 FROM unnest($1::text[], $2::bigint[]) AS t(s, v)
		ON CONFLICT (stream_id) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at`, upStreams, upVersions, now)
	b.Queue(`UPDATE event_log_head SET position = $1 WHERE id`, pos)
	b.Queue(`SELECT pg_notify('`+channel+`', $1)`, strconv.FormatInt(pos, 10))
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, errs, fmt.Errorf("append: updating streams and head: %w", err)
	}
	if s.cfg.BeforeCommit != nil {
		if err := s.cfg.BeforeCommit(ctx, cols.n); err != nil {
			return nil, errs, fmt.Errorf("append: aborted before commit: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, errs, fmt.Errorf("append: commit: %w", err)
	}
	return results, errs, nil
}

var errDuplicateInsert = errors.New("an event id is already in the log")

// duplicateOf decides whether an append is a retry of one already committed
// (or already accepted earlier in this batch).
func duplicateOf(a eventstore.Append, existing map[uuid.UUID]stored, inBatch map[uuid.UUID]int, results []eventstore.AppendResult) (eventstore.AppendResult, bool, error) {
	var found []stored
	batchIdx := -1
	for _, e := range a.Events {
		if st, ok := existing[e.ID]; ok {
			found = append(found, st)
		} else if j, ok := inBatch[e.ID]; ok {
			batchIdx = j
		}
	}
	switch {
	case batchIdx >= 0:
		if len(found) == 0 && results[batchIdx].StreamID == a.StreamID && int(results[batchIdx].LastVersion-results[batchIdx].FirstVersion)+1 == len(a.Events) {
			r := results[batchIdx]
			r.Duplicate = true
			return r, true, nil
		}
		return eventstore.AppendResult{}, false, eventstore.ErrDuplicateEventID
	case len(found) == 0:
		return eventstore.AppendResult{}, false, nil
	case len(found) != len(a.Events):
		return eventstore.AppendResult{}, false, eventstore.ErrDuplicateEventID
	}
	r := eventstore.AppendResult{StreamID: a.StreamID, Duplicate: true}
	for i, st := range found {
		if st.stream != a.StreamID {
			return eventstore.AppendResult{}, false, eventstore.ErrDuplicateEventID
		}
		if i == 0 {
			r.FirstVersion, r.FirstPosition = uint64(st.version), uint64(st.position)
		}
		r.LastVersion, r.LastPosition = uint64(st.version), uint64(st.position)
	}
	return r, true, nil
}

func lookupIDs(ctx context.Context, tx pgx.Tx, ids []uuid.UUID) (map[uuid.UUID]stored, error) {
	out := map[uuid.UUID]stored{}
	rows, err := tx.Query(ctx, `SELECT event_id, stream_id, stream_version, position FROM events WHERE event_id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("append: looking up event ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		var st stored
		if err := rows.Scan(&id, &st.stream, &st.version, &st.position); err != nil {
			return nil, fmt.Errorf("append: looking up event ids: %w", err)
		}
		out[id] = st
	}
	return out, rows.Err()
}

// columns holds a batch of events column by column.
type columns struct {
	n         int
	positions []int64
	ids       []uuid.UUID
	streams   []string
	versions  []int64
	types     []string
	schemas   []int32
	data      []string
	metadata  []string
	recorded  time.Time
}

func newColumns(n int) *columns {
	return &columns{
		positions: make([]int64, 0, n), ids: make([]uuid.UUID, 0, n), streams: make([]string, 0, n),
		versions: make([]int64, 0, n), types: make([]string, 0, n), schemas: make([]int32, 0, n),
		data: make([]string, 0, n), metadata: make([]string, 0, n),
	}
}

func (c *columns) add(pos int64, e eventstore.NewEvent, stream string, version int64, md []byte, now time.Time) {
	c.n++
	c.positions = append(c.positions, pos)
	c.ids = append(c.ids, e.ID)
	c.streams = append(c.streams, stream)
	c.versions = append(c.versions, version)
	c.types = append(c.types, e.Type)
	c.schemas = append(c.schemas, int32(max(e.SchemaVersion, 1)))
	c.data = append(c.data, string(dataOrEmpty(e.Data)))
	c.metadata = append(c.metadata, string(md))
	c.recorded = now
}

func (c *columns) insert(ctx context.Context, tx pgx.Tx) error {
	if c.n < copyThreshold {
		_, err := tx.Exec(ctx, `INSERT INTO events (position, event_id, stream_id, stream_version, event_type, schema_version, data, metadata, recorded_at)
			SELECT p, i, s, v, t, sv, d::jsonb, m::jsonb, $9
			FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::bigint[], $5::text[], $6::int[], $7::text[], $8::text[]) AS x(p, i, s, v, t, sv, d, m)`,
			c.positions, c.ids, c.streams, c.versions, c.types, c.schemas, c.data, c.metadata, c.recorded)
		return err
	}
	i := -1
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"events"},
		[]string{"position", "event_id", "stream_id", "stream_version", "event_type", "schema_version", "data", "metadata", "recorded_at"},
		pgx.CopyFromFunc(func() ([]any, error) {
			i++
			if i >= c.n {
				return nil, nil
			}
			return []any{c.positions[i], c.ids[i], c.streams[i], c.versions[i], c.types[i], c.schemas[i], c.data[i], c.metadata[i], c.recorded}, nil
		}))
	return err
}
