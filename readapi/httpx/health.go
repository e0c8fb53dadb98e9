package httpx

import (
	"context"
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
// log head.
func CheckProjections(ctx context.Context, pool *pgxpool.Pool, head uint64) (map[string]ProjectionCheck, error) {
	rows, err := pool.Query(ctx, `SELECT name, position, greatest($1::bigint - position, 0) FROM projection_checkpoints ORDER BY name`, int64(head))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]ProjectionCheck{}
	for rows.Next() {
		var name string
		var pc ProjectionCheck
		if err := rows.Scan(&name, &pc.Position, &pc.LagEvents); err != nil {
			return nil, err
		}
		out[name] = pc
	}
	return out, rows.Err()
}
