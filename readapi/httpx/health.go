package httpx

import (
	"context"
	"time"

	"github.com/arr-dev/arr/projections"
)

// Check is one dependency's state in a health report.
type Check struct {
	Status    string  `json:"status"` // "ok" or "down"
	LatencyMS float64 `json:"latency_ms"`
	Error     string  `json:"error,omitempty"`
}

// ProjectionCheck is one read model's state in a health report.
type ProjectionCheck = projections.Health

// CheckDatabase pings PostgreSQL. The error text carries no credentials.
func CheckDatabase(ctx context.Context, status Status) Check {
	start := time.Now()
	err := status.Ping(ctx)
	c := Check{Status: "ok", LatencyMS: float64(time.Since(start).Microseconds()) / 1000}
	if err != nil {
		c.Status, c.Error = "down", "database unreachable"
	}
	return c
}

// Status is what a health report reads: the database's answer and the
// read models' checkpoints (projections.Status).
type Status interface {
	Ping(ctx context.Context) error
	Health(ctx context.Context, head uint64) (map[string]projections.Health, error)
}
