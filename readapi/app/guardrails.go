package app

import (
	"context"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/projections/guardrails"
)

// Guardrails reads the guardrails read model.
type Guardrails interface {
	Effective(ctx context.Context, accountID, keyID uuid.UUID) (guardrails.Effective, error)
	Account(ctx context.Context, accountID uuid.UUID) (guardrails.Settings, error)
}

var _ Guardrails = (*guardrails.Queries)(nil)
