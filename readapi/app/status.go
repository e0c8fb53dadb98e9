package app

import (
	"context"
	"time"

	"github.com/arr-dev/arr/projections"
)

// Status is the runner's own state: whether the database answers, each
// read model's checkpoint, lag, parked events and faults
// (projections.Status).
type Status interface {
	Ping(ctx context.Context) error
	Checkpoints(ctx context.Context) ([]projections.Checkpoint, error)
	Health(ctx context.Context, head uint64) (map[string]projections.Health, error)
	Rates(ctx context.Context, head func(context.Context) (uint64, error), sample time.Duration) (uint64, []projections.Rate, error)
}

var _ Status = (*projections.Status)(nil)
