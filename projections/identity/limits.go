package identity

import (
	"time"

	"github.com/arr-dev/arr/domain/account"
)

// limitColumns are a key's limits in api_keys (alias k), in limitsScan's
// order.
const limitColumns = `k.max_budget_micro_usd, k.budget_period, k.rpm_limit, k.tpm_limit, k.models, k.expires_at`

// limitsScan receives limitColumns.
type limitsScan struct {
	budget  int64
	period  string
	rpm     int64
	tpm     int64
	models  []string
	expires *time.Time
}

func (l *limitsScan) dest() []any {
	return []any{&l.budget, &l.period, &l.rpm, &l.tpm, &l.models, &l.expires}
}

func (l *limitsScan) limits() account.KeyLimits {
	out := account.KeyLimits{MaxBudget: account.MicroUSD(l.budget), Period: account.Period(l.period), RPM: l.rpm, TPM: l.tpm}
	if len(l.models) > 0 {
		out.Models = l.models
	}
	if l.expires != nil {
		t := l.expires.UTC()
		out.ExpiresAt = &t
	}
	return out
}
