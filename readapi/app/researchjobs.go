package app

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/projections/researchjobs"
)

// ResearchJobs reads the research jobs read model
// (*researchjobs.Queries).
type ResearchJobs interface {
	Get(ctx context.Context, account, id uuid.UUID) (researchjobs.Job, bool, error)
	Events(ctx context.Context, id uuid.UUID, after int64, limit int) ([]researchjobs.Event, error)
	Open(ctx context.Context, limit int) ([]researchjobs.OpenJob, error)
	OpenCount(ctx context.Context, account uuid.UUID) (int, error)
	Status(ctx context.Context, id uuid.UUID) (string, error)
	DueDeliveries(ctx context.Context, now time.Time, limit int) ([]researchjobs.DueDelivery, error)
}
