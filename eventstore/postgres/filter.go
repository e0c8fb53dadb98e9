package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/arr-dev/arr/eventstore"
)

var _ eventstore.FilterReader = (*Store)(nil)

// ReadFiltered implements eventstore.FilterReader in one query: the
// position range walks the primary key, and the filter's conditions are
// the query's (a stream's events come by its (stream_id, stream_version)
// index).
func (s *Store) ReadFiltered(ctx context.Context, after, upTo uint64, limit int, f eventstore.Filter) ([]eventstore.Event, error) {
	if limit <= 0 {
		limit = eventstore.DefaultBatch
	}
	where := []string{"position > $1", "position <= $2"}
	args := []any{int64(after), int64(upTo)}
	add := func(cond string, arg any) {
		args = append(args, arg)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if len(f.Types) > 0 {
		add("event_type = ANY(?)", f.Types)
	}
	if f.Stream != "" {
		add("stream_id = ?", f.Stream)
	}
	if !f.Since.IsZero() {
		add("recorded_at >= ?", f.Since)
	}
	if !f.Until.IsZero() {
		add("recorded_at < ?", f.Until)
	}
	args = append(args, limit)
	rows, err := s.pool.Query(ctx, `SELECT `+selectColumns+` FROM events WHERE `+strings.Join(where, " AND ")+
		` ORDER BY position LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("reading log (%d, %d]: %w", after, upTo, err)
	}
	return scanEvents(rows, limit)
}
