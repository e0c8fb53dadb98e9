package app

import (
	"context"

	"github.com/arr-dev/arr/projections"
)

// Status is the runner's own state: whether the database answers, each
// read model's checkpoint, lag, parked events and faults
// (projections.Status).
type Status interface {
	Ping(ctx context.Context) error
	Checkpoints(ctx context.Context) ([]projections.Checkpoint, error)
	Health(ctx context.Context, head uint64) (map[string]projections.Health, error)
}

var _ Status = (*projections.Status)(nil)
