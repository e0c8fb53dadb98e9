package app

import (
	"context"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands/spend"
	"github.com/arr-dev/arr/domain/account"
)

// Spend is what keys' and accounts' budgets spent in their current
// period; *spend.Ledger is one.
type Spend interface {
	KeySpent(ctx context.Context, key uuid.UUID, p account.Period) (spend.Spent, error)
	AccountSpent(ctx context.Context, acc uuid.UUID, p account.Period) (spend.Spent, error)
}

var _ Spend = (*spend.Ledger)(nil)
