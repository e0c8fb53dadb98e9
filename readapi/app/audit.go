package app

import (
	"context"

	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/projections/auditentries"
	"github.com/arr-dev/arr/projections/tierquality"
)

// Audit is the gateway's audit read model: one entry per recorded
// completion, found by its hash (projections/auditentries).
type Audit interface {
	Get(ctx context.Context, hash string) (auditentries.AuditEntry, error)
	Stats(ctx context.Context) (int64, string, error)
}

// TierQuality is the feedback each tier received, which routing weighs
// (projections/tierquality).
type TierQuality interface {
	Feedback(ctx context.Context) (routing.Feedback, error)
}

var (
	_ Audit       = (*auditentries.Queries)(nil)
	_ TierQuality = (*tierquality.Queries)(nil)
)
