package app

import (
	"context"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/projections/monitors"
)

// Monitors reads the list monitors' read model.
type Monitors interface {
	List(ctx context.Context, account uuid.UUID, withDeleted bool, limit, offset int) ([]monitors.Monitor, int, error)
	Get(ctx context.Context, account, id uuid.UUID) (monitors.Monitor, bool, error)
}

var _ Monitors = (*monitors.Queries)(nil)
