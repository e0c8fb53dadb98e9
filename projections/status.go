package projections

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Checkpoint is how far one projection (or fan-out forwarder, named
// "fanout:…") has applied the log.
type Checkpoint struct {
	Name      string    `json:"name"`
	Position  int64     `json:"position"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Checkpoints lists every checkpoint. Safe for concurrent use.
func Checkpoints(ctx context.Context, pool *pgxpool.Pool) ([]Checkpoint, error) {
	rows, err := pool.Query(ctx, `SELECT name, position, updated_at FROM projection_checkpoints ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("reading checkpoints: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Checkpoint, error) {
		var c Checkpoint
		err := r.Scan(&c.Name, &c.Position, &c.UpdatedAt)
		c.UpdatedAt = c.UpdatedAt.UTC()
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading checkpoints: %w", err)
	}
	return out, nil
}

// Health is one read model's state in a health report.
type Health struct {
	Position  int64 `json:"position"`
	LagEvents int64 `json:"lag_events"`
	// Parked counts the events the projection could not apply and moved
	// past (arr projections parked NAME lists them).
	Parked int64 `json:"parked_events"`
	// FailingSince is set while the projection's last batch failed and it
	// has not got past it.
	FailingSince *time.Time `json:"failing_since,omitempty"`
	// Error is the reason a stopped projection stopped.
	Error string `json:"error,omitempty"`
	// Stopped is set when that failure stopped the projection
	// (ErrStopped): it is followed no more until arr starts again.
	Stopped bool `json:"stopped,omitempty"`
}

// Problem says what is wrong with the read model, or "" when nothing is.
func (pc Health) Problem(name string) string {
	switch {
	case pc.Stopped:
		return fmt.Sprintf("projection %s stopped at position %d: %s", name, pc.Position, pc.Error)
	case pc.FailingSince != nil:
		return fmt.Sprintf("projection %s cannot apply the events after position %d (failing since %s)", name, pc.Position, pc.FailingSince.Format(time.RFC3339))
	case pc.Parked > 0:
		return fmt.Sprintf("projection %s parked %d event(s) it could not apply (arr projections parked %s)", name, pc.Parked, name)
	}
	return ""
}

// Status reads the runner's own tables (checkpoints, parked events,
// faults) for health reports. Safe for concurrent use.
type Status struct{ pool *pgxpool.Pool }

// NewStatus reads through pool.
func NewStatus(pool *pgxpool.Pool) *Status { return &Status{pool: pool} }

// Ping checks that PostgreSQL answers.
func (s *Status) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// Checkpoints lists every checkpoint.
func (s *Status) Checkpoints(ctx context.Context) ([]Checkpoint, error) {
	return Checkpoints(ctx, s.pool)
}

// Health reports each read model's position and lag behind the log head
// head, its parked events and whether it is failing now.
func (s *Status) Health(ctx context.Context, head uint64) (map[string]Health, error) {
	rows, err := s.pool.Query(ctx, `SELECT c.name, c.position, greatest($1::bigint - c.position, 0),
		(SELECT count(*) FROM projection_parked p WHERE p.projection = c.name AND p.cleared_at IS NULL), f.since, coalesce(f.error, '')
		FROM projection_checkpoints c LEFT JOIN projection_faults f ON f.projection = c.name AND c.position <= f.position
		ORDER BY c.name`, int64(head))
	if err != nil {
		return nil, fmt.Errorf("reading the projections' health: %w", err)
	}
	defer rows.Close()
	out := map[string]Health{}
	for rows.Next() {
		var name string
		var h Health
		if err := rows.Scan(&name, &h.Position, &h.LagEvents, &h.Parked, &h.FailingSince, &h.Error); err != nil {
			return nil, fmt.Errorf("reading the projections' health: %w", err)
		}
		if h.FailingSince != nil {
			t := h.FailingSince.UTC()
			h.FailingSince = &t
			h.Stopped = strings.Contains(h.Error, StoppedMarker+": ")
		}
		if !h.Stopped { // a failure's text stays in arr's logs and status
			h.Error = ""
		}
		out[name] = h
	}
	return out, rows.Err()
}

// Rate is a read model's position, lag and speed, as `arr projections
// status` reports them.
type Rate struct {
	Name       string    `json:"name"`
	Position   int64     `json:"position"`
	LagEvents  int64     `json:"lag_events"`
	RatePerSec float64   `json:"events_per_second"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Rates watches the checkpoints for sample and reports each read model's
// position, its lag behind the log head (read by head after the sample)
// and the events it applied per second meanwhile; it returns the head too.
func (s *Status) Rates(ctx context.Context, head func(context.Context) (uint64, error), sample time.Duration) (uint64, []Rate, error) {
	first, err := s.Checkpoints(ctx)
	if err != nil {
		return 0, nil, err
	}
	t := time.NewTimer(sample)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return 0, nil, ctx.Err()
	case <-t.C:
	}
	second, err := s.Checkpoints(ctx)
	if err != nil {
		return 0, nil, err
	}
	h, err := head(ctx)
	if err != nil {
		return 0, nil, err
	}
	return h, rates(first, second, h, sample), nil
}

// rates compares two readings of the checkpoints taken sample apart.
func rates(first, second []Checkpoint, head uint64, sample time.Duration) []Rate {
	out := make([]Rate, 0, len(second))
	for _, c := range second {
		r := Rate{Name: c.Name, Position: c.Position, LagEvents: max(int64(head)-c.Position, 0), UpdatedAt: c.UpdatedAt}
		for _, f := range first {
			if f.Name == c.Name && sample > 0 {
				r.RatePerSec = float64(c.Position-f.Position) / sample.Seconds()
			}
		}
		out = append(out, r)
	}
	return out
}
