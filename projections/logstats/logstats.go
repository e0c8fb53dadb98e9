package logstats

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/arr-dev/arr/projections"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Projection is the read model behind `arr events stats`: events per type and
// per stream category (the part of a stream id before its first '-'), with
// first and last positions and times. It counts, so applying an event twice
// would show: the crash tests compare it with a fresh rebuild.
type Projection struct{}

// Name is the log-stats projection's name and checkpoint key.
const Name = "logstats"

// ddl is the read model's tables.
const ddl = `
CREATE TABLE event_types (
    event_type     text        PRIMARY KEY,
    events         bigint      NOT NULL,
    first_position bigint      NOT NULL,
    last_position  bigint      NOT NULL,
    first_at       timestamptz NOT NULL,
    last_at        timestamptz NOT NULL
);
CREATE TABLE stream_categories (
    category       text        PRIMARY KEY,
    streams        bigint      NOT NULL,
    events         bigint      NOT NULL,
    last_position  bigint      NOT NULL,
    last_at        timestamptz NOT NULL
);
`

type typeAgg struct {
	n           int64
	first, last int64
	fAt, lAt    time.Time
}

type catAgg struct {
	streams, n int64
	last       int64
	lAt        time.Time
}

// Category is the part of a stream id before its first '-'.
func Category(stream string) string {
	if i := strings.IndexByte(stream, '-'); i > 0 {
		return stream[:i]
	}
	return stream
}

// Spec implements projections.Projection: logstats reads every event.
func (Projection) Spec() projections.Spec {
	return projections.Spec{Name: Name, DDL: ddl, AllEvents: apply}
}

// apply counts a batch of events: one upsert per table per batch.
func apply(ctx context.Context, tx pgx.Tx, events []projections.Event) error {
	types := map[string]*typeAgg{}
	cats := map[string]*catAgg{}
	for _, e := range events {
		t := types[e.Type]
		if t == nil {
			t = &typeAgg{first: int64(e.Position), fAt: e.RecordedAt}
			types[e.Type] = t
		}
		t.n++
		t.last, t.lAt = int64(e.Position), e.RecordedAt
		c := cats[Category(e.StreamID)]
		if c == nil {
			c = &catAgg{}
			cats[Category(e.StreamID)] = c
		}
		c.n++
		if e.StreamVersion == 0 {
			c.streams++
		}
		c.last, c.lAt = int64(e.Position), e.RecordedAt
	}
	var tn []string
	var tc, tf, tl []int64
	var tfa, tla []time.Time
	for k, v := range types {
		tn, tc, tf, tl, tfa, tla = append(tn, k), append(tc, v.n), append(tf, v.first), append(tl, v.last), append(tfa, v.fAt), append(tla, v.lAt)
	}
	var cn []string
	var cs, cc, cl []int64
	var cla []time.Time
	for k, v := range cats {
		cn, cs, cc, cl, cla = append(cn, k), append(cs, v.streams), append(cc, v.n), append(cl, v.last), append(cla, v.lAt)
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO event_types AS t (event_type, events, first_position, last_position, first_at, last_at)
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::timestamptz[], $6::timestamptz[])
		ON CONFLICT (event_type) DO UPDATE SET events = t.events + excluded.events,
			last_position = excluded.last_position, last_at = excluded.last_at`, tn, tc, tf, tl, tfa, tla)
	b.Queue(`INSERT INTO stream_categories AS c (category, streams, events, last_position, last_at)
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::timestamptz[])
		ON CONFLICT (category) DO UPDATE SET streams = c.streams + excluded.streams, events = c.events + excluded.events,
			last_position = excluded.last_position, last_at = excluded.last_at`, cn, cs, cc, cl, cla)
	return tx.SendBatch(ctx, b).Close()
}

// TypeStats is one row of the per-type statistics.
type TypeStats struct {
	Type          string    `json:"type"`
	Events        int64     `json:"events"`
	FirstPosition int64     `json:"first_position"`
	LastPosition  int64     `json:"last_position"`
	FirstAt       time.Time `json:"first_at"`
	LastAt        time.Time `json:"last_at"`
}

// CategoryStats is one row of the per-stream-category statistics.
type CategoryStats struct {
	Category     string    `json:"category"`
	Streams      int64     `json:"streams"`
	Events       int64     `json:"events"`
	LastPosition int64     `json:"last_position"`
	LastAt       time.Time `json:"last_at"`
}

// Stats reads the log-stats read model. Safe for concurrent use.
func Stats(ctx context.Context, pool *pgxpool.Pool) ([]TypeStats, []CategoryStats, error) {
	rows, err := pool.Query(ctx, `SELECT event_type, events, first_position, last_position, first_at, last_at FROM rm_logstats.event_types ORDER BY events DESC, event_type`)
	if err != nil {
		return nil, nil, fmt.Errorf("reading event stats: %w", err)
	}
	types, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TypeStats, error) {
		var t TypeStats
		err := r.Scan(&t.Type, &t.Events, &t.FirstPosition, &t.LastPosition, &t.FirstAt, &t.LastAt)
		t.FirstAt, t.LastAt = t.FirstAt.UTC(), t.LastAt.UTC()
		return t, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading event stats: %w", err)
	}
	rows, err = pool.Query(ctx, `SELECT category, streams, events, last_position, last_at FROM rm_logstats.stream_categories ORDER BY events DESC, category`)
	if err != nil {
		return nil, nil, fmt.Errorf("reading stream stats: %w", err)
	}
	cats, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (CategoryStats, error) {
		var c CategoryStats
		err := r.Scan(&c.Category, &c.Streams, &c.Events, &c.LastPosition, &c.LastAt)
		c.LastAt = c.LastAt.UTC()
		return c, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading stream stats: %w", err)
	}
	return types, cats, nil
}
