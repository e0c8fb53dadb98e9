package usage

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/account"
)

// BudgetThresholdCrossed: a key's or an account's spend in a budget period
// reached a share of its budget (50, 80 or 100 percent). Recorded once per
// budget, period and threshold: its stream (ThresholdStreamID) holds it
// alone, appended only if it has no events.
type BudgetThresholdCrossed struct {
	// AccountID is the account (the one that owns the key, for a key's
	// budget).
	AccountID uuid.UUID `json:"account_id"`
	// KeyID is the key whose budget it is; absent for the account's own.
	KeyID *uuid.UUID `json:"key_id,omitempty"`
	// Scope is "key" or "account".
	Scope string `json:"scope"`
	// Period is the budget's period: day, week, month or total.
	Period account.Period `json:"budget_period"`
	// PeriodStart is when the period crossed began (UTC).
	PeriodStart time.Time `json:"period_start"`
	// ThresholdPercent is the share crossed: 50, 80 or 100.
	ThresholdPercent int `json:"threshold_percent"`
	// SpentMicroUSD is the period's spend once crossed.
	SpentMicroUSD int64 `json:"spent_micro_usd"`
	// BudgetMicroUSD is the budget then.
	BudgetMicroUSD int64 `json:"budget_micro_usd"`
	// CrossedAt is when the crossing spend was settled (UTC).
	CrossedAt time.Time `json:"crossed_at"`
}

func (BudgetThresholdCrossed) EventType() string  { return "BudgetThresholdCrossed" }
func (BudgetThresholdCrossed) SchemaVersion() int { return 1 }

// ThresholdStreamID is the stream of one threshold of one budget's period:
// it holds one event at most.
func ThresholdStreamID(scope string, id uuid.UUID, period account.Period, start time.Time, percent int) string {
	return fmt.Sprintf("budget-%s-%s-%s-%s-%d", scope, id, period, start.UTC().Format("20060102"), percent)
}
