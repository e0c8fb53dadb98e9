package accountweb

import (
	"context"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/date"
	"github.com/arr-dev/arr/projections/identity"
)

// formLimits reads the limit fields of the gateway's mint form; an empty
// field is no limit.
func formLimits(c *gin.Context) (account.KeyLimits, error) {
	var l account.KeyLimits
	field := func(name string) string { return strings.TrimSpace(c.PostForm(name)) }
	if v := field("max_budget_usd"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return l, domain.Invalid("invalid_max_budget", "max_budget_usd", "the budget must be a number of US dollars; got %q", v)
		}
		m, err := account.ParseUSD("max_budget_usd", f)
		if err != nil {
			return l, err
		}
		l.MaxBudget, l.Period = m, account.Period(field("budget_period"))
		if l.Period == "" {
			l.Period = account.PeriodMonth
		}
	}
	for _, r := range []struct {
		name string
		to   *int64
	}{{"rpm_limit", &l.RPM}, {"tpm_limit", &l.TPM}} {
		if v := field(r.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return l, domain.Invalid("invalid_"+r.name, r.name, "%s must be a whole number of at least 1; got %q", r.name, v)
			}
			*r.to = n
		}
	}
	for _, m := range strings.Split(field("models"), ",") {
		if m = strings.TrimSpace(m); m != "" {
			l.Models = append(l.Models, m)
		}
	}
	if v := field("expires_at"); v != "" {
		t, err := date.Instant("expires_at", v)
		if err != nil {
			return l, err
		}
		l.ExpiresAt = &t
	}
	return l, nil
}

// knownModel says whether a name is a tier or a model id of the gateway's
// catalog (any name outside the gateway).
func (w *web) knownModel(name string) bool {
	if w.d.App.Completions == nil {
		return true
	}
	return w.d.App.Completions.Catalog().Knows(name)
}

// keySpent describes what a key's budget spent this period, or "".
func (w *web) keySpent(ctx context.Context, k identity.KeyInfo) string {
	if k.Limits.MaxBudget == 0 || w.d.App.Queries.Spend == nil {
		return ""
	}
	s, err := w.d.App.Queries.Spend.KeySpent(ctx, k.ID, k.Limits.Period)
	if err != nil {
		w.log.Warn("reading a key's spend", "err", err)
		return ""
	}
	return "$" + s.Used.USD() + " of $" + k.Limits.MaxBudget.USD() + " this " + string(k.Limits.Period)
}
