package httpx

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Check is one dependency's state in a health report.
type Check struct {
	Status    string  `json:"status"` // "ok" or "down"
	LatencyMS float64 `json:"latency_ms"`
	Error     string  `json:"error,omitempty"`
}

// ProjectionCheck is one read model's state in a health report.
type ProjectionCheck struct {
	Position  int64 `json:"position"`
	LagEvents int64 `json:"lag_events"`
	// Parked counts the events the projection could not apply and moved
	// past (arr projections parked NAME lists them).
	Parked int64 `json:"parked_events"`
	// FailingSince is set while the projection's last batch failed and it
	// has not got past it.
	FailingSince *time.Time `json:"failing_since,omitempty"`
}

// Problem says what is wrong with the read model, or "" when nothing is.
func (pc ProjectionCheck) Problem(name string) string {
	switch {
	case pc.FailingSince != nil:
		return fmt.Sprintf("projection %s cannot apply the events after position %d (failing since %s)", name, pc.Position, pc.FailingSince.Format(time.RFC3339))
	case pc.Parked > 0:
		return fmt.Sprintf("projection %s parked %d event(s) it could not apply (arr projections parked %s)", name, pc.Parked, name)
	}
	return ""
}

// CheckDatabase pings PostgreSQL. The error text carries no credentials.
func CheckDatabase(ctx context.Context, pool *pgxpool.Pool) Check {
	start := time.Now()
	err := pool.Ping(ctx)
	c := Check{Status: "ok", LatencyMS: float64(time.Since(start).Microseconds()) / 1000}
	if err != nil {
		c.Status, c.Error = "down", "database unreachable"
	}
	return c
}

// CheckProjections reports each read model's position and lag behind the
// log head, its parked events and whether it is failing now.
func CheckProjections(ctx context.Context, pool *pgxpool.Pool, head uint64) (map[string]ProjectionCheck, error) {
	rows, err := pool.Query(ctx, `SELECT c.name, c.position, greatest($1::bigint - c.position, 0),
		(SELECT count(*) FROM projection_parked p WHERE p.projection = c.name), f.since
		FROM projection_checkpoints c LEFT JOIN projection_faults f ON f.projection = c.name AND c.position <= f.position
		ORDER BY c.name`, int64(head))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]ProjectionCheck{}
	for rows.Next() {
		var name string
		var pc ProjectionCheck
		if err := rows.Scan(&name, &pc.Position, &pc.LagEvents, &pc.Parked, &pc.FailingSince); err != nil {
			return nil, err
		}
		if pc.FailingSince != nil {
			t := pc.FailingSince.UTC()
			pc.FailingSince = &t
		}
		out[name] = pc
	}
	return out, rows.Err()
}
