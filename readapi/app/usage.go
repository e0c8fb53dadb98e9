package app

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/projections/answerusage"
	"github.com/arr-dev/arr/projections/callusage"
	"github.com/arr-dev/arr/projections/gatewayusage"
)

// Usage is the metered-calls read model: calls per account, key, service
// and UTC day (projections/callusage).
type Usage interface {
	Account(ctx context.Context, accountID uuid.UUID, days int, now time.Time) ([]callusage.DailyCalls, error)
	AccountKeys(ctx context.Context, accountID uuid.UUID, days int, now time.Time) ([]callusage.KeyDailyCalls, error)
	Key(ctx context.Context, keyID uuid.UUID, days int, now time.Time) ([]callusage.DailyCalls, error)
}

// AnswerUsage is the answer service's answers per key and UTC day
// (projections/answerusage).
type AnswerUsage interface {
	ByKey(ctx context.Context, accountID uuid.UUID, days int, now time.Time) ([]answerusage.KeyDayAnswers, error)
}

// GatewayUsage is the gateway's completions, tokens and cost per account
// and UTC day (projections/gatewayusage).
type GatewayUsage interface {
	Rollup(ctx context.Context, accountID uuid.UUID, days int, now time.Time) (gatewayusage.UsageRollup, error)
}

var (
	_ Usage        = (*callusage.Queries)(nil)
	_ AnswerUsage  = (*answerusage.Queries)(nil)
	_ GatewayUsage = (*gatewayusage.Queries)(nil)
)
