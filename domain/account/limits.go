package account

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arr-dev/arr/domain"
)

// Period is the span a budget counts over: a UTC calendar day, week
// (Monday to Sunday) or month, or the key's whole life ("total").
type Period string

// The budget periods.
const (
	PeriodDay   Period = "day"
	PeriodWeek  Period = "week"
	PeriodMonth Period = "month"
	PeriodTotal Period = "total"
)

// Periods lists every budget period.
func Periods() []Period { return []Period{PeriodDay, PeriodWeek, PeriodMonth, PeriodTotal} }

// ParsePeriod validates a period name.
func ParsePeriod(s string) (Period, error) {
	p := Period(s)
	if slices.Contains(Periods(), p) {
		return p, nil
	}
	return "", domain.Invalid("invalid_budget_period", "budget_period", "budget_period must be day, week, month or total; got %q", s)
}

// totalStart and totalEnd bound the "total" period.
var (
	totalStart = time.Unix(0, 0).UTC()
	totalEnd   = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
)

// Window is the period's span [start, end) that holds t, in UTC: a day
// starts at midnight, a week on Monday at midnight, a month on its first
// day; "total" is one span for all time.
func (p Period) Window(t time.Time) (start, end time.Time) {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch p {
	case PeriodDay:
		return day, day.AddDate(0, 0, 1)
	case PeriodWeek:
		back := (int(day.Weekday()) + 6) % 7 // days since Monday
		s := day.AddDate(0, 0, -back)
		return s, s.AddDate(0, 0, 7)
	case PeriodMonth:
		s := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return s, s.AddDate(0, 1, 0)
	}
	return totalStart, totalEnd
}

// MaxLimitModels bounds how many tiers and models one key may list.
const MaxLimitModels = 50

// KeyLimits are what a gateway key may spend and use. Zero values mean no
// limit: no budget, no request or token rate, every model, no expiry.
// Money is in micro-dollars.
type KeyLimits struct {
	MaxBudget MicroUSD `json:"max_budget_micro_usd,omitempty"`
	// Period is the budget's period; set exactly when MaxBudget is.
	Period Period `json:"budget_period,omitempty"`
	// RPM and TPM are requests and tokens (prompt plus completion) per
	// UTC clock minute.
	RPM int64 `json:"rpm_limit,omitempty"`
	TPM int64 `json:"tpm_limit,omitempty"`
	// Models are the tiers and model ids the key may use (empty: all);
	// auto chooses among them only.
	Models    []string   `json:"models,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// IsZero reports whether the limits limit nothing.
func (l KeyLimits) IsZero() bool {
	return l.MaxBudget == 0 && l.RPM == 0 && l.TPM == 0 && len(l.Models) == 0 && l.ExpiresAt == nil
}

// Equal reports whether two limits are the same.
func (l KeyLimits) Equal(o KeyLimits) bool {
	sameExpiry := (l.ExpiresAt == nil) == (o.ExpiresAt == nil) && (l.ExpiresAt == nil || l.ExpiresAt.Equal(*o.ExpiresAt))
	return l.MaxBudget == o.MaxBudget && l.Period == o.Period && l.RPM == o.RPM && l.TPM == o.TPM &&
		slices.Equal(l.Models, o.Models) && sameExpiry
}

// Expired reports whether the key's expiry is at or before now.
func (l KeyLimits) Expired(now time.Time) bool {
	return l.ExpiresAt != nil && !now.Before(*l.ExpiresAt)
}

// Allows reports whether the key may use the model id of the tier: the
// key lists no models, or lists the id or the tier.
func (l KeyLimits) Allows(id, tier string) bool {
	if len(l.Models) == 0 {
		return true
	}
	return slices.Contains(l.Models, id) || (tier != "" && slices.Contains(l.Models, tier))
}

// LimitsChange changes some limits and keeps the others: a nil field is
// kept; a zero value clears (a budget of 0, a rate of 0, no models); a
// non-nil ExpiresAt holding nil clears the expiry.
type LimitsChange struct {
	MaxBudget *MicroUSD
	Period    *Period
	RPM       *int64
	TPM       *int64
	Models    *[]string
	ExpiresAt **time.Time
}

// Apply returns l changed by c. A budget set without a period keeps the
// key's period, or takes "month"; a cleared budget clears its period.
func (c LimitsChange) Apply(l KeyLimits) KeyLimits {
	if c.MaxBudget != nil {
		l.MaxBudget = *c.MaxBudget
	}
	if c.Period != nil {
		l.Period = *c.Period
	}
	if l.MaxBudget > 0 && l.Period == "" {
		l.Period = PeriodMonth
	}
	if l.MaxBudget == 0 {
		l.Period = ""
	}
	if c.RPM != nil {
		l.RPM = *c.RPM
	}
	if c.TPM != nil {
		l.TPM = *c.TPM
	}
	if c.Models != nil {
		l.Models = slices.Clone(*c.Models)
	}
	if c.ExpiresAt != nil {
		l.ExpiresAt = nil
		if *c.ExpiresAt != nil {
			t := (*c.ExpiresAt).UTC()
			l.ExpiresAt = &t
		}
	}
	return l
}

// Validate checks the limits; known says whether a name is a tier or a
// model id of the catalog (nil: any name).
func (l KeyLimits) Validate(known func(string) bool) error {
	if l.MaxBudget < 0 {
		return domain.Invalid("invalid_max_budget", "max_budget_usd", "max_budget_usd must be a positive amount of US dollars, or 0 for none")
	}
	if l.MaxBudget > 0 {
		if _, err := ParsePeriod(string(l.Period)); err != nil {
			return err
		}
	}
	if l.RPM < 0 || l.TPM < 0 {
		return domain.Invalid("invalid_rate_limit", "rpm_limit", "rpm_limit and tpm_limit must be whole numbers of at least 1, or 0 for none")
	}
	if len(l.Models) > MaxLimitModels {
		return domain.Invalid("too_many_models", "models", "a key may list at most %d tiers and models; got %d", MaxLimitModels, len(l.Models))
	}
	for i, m := range l.Models {
		if m == "" || len(m) > 100 || strings.ContainsAny(m, " \t\r\n,") {
			return domain.Invalid("invalid_models", "models", "models must be tier names and model ids, without spaces or commas; got %q", m)
		}
		if slices.Contains(l.Models[:i], m) {
			return domain.Invalid("invalid_models", "models", "%q is listed twice in models", m)
		}
		if known != nil && !known(m) {
			return domain.Invalid("unknown_model", "models", "%q is neither a tier nor a model id of the catalog (GET /v1/models lists them)", m)
		}
	}
	return nil
}

// Budget is an account's budget, shared by its keys: 0 for none.
type Budget struct {
	Max    MicroUSD
	Period Period
}

// Validate checks the budget.
func (b Budget) Validate() error {
	if b.Max < 0 {
		return domain.Invalid("invalid_max_budget", "max_budget_usd", "max_budget_usd must be a positive amount of US dollars, or 0 for none")
	}
	if b.Max > 0 {
		if _, err := ParsePeriod(string(b.Period)); err != nil {
			return err
		}
	}
	return nil
}

// Thresholds are the shares of a budget whose crossing is recorded and
// mailed, in percent.
func Thresholds() []int { return []int{50, 80, 100} }

// Crossed is the thresholds a spend crossed going from before to after
// under a budget of max: those t with before < t% of max <= after.
func Crossed(before, after, max MicroUSD) []int {
	if max <= 0 || after <= before {
		return nil
	}
	var out []int
	for _, t := range Thresholds() {
		// t% of max, rounded up: spend at or over it has crossed.
		at := (MicroUSD(t)*max + 99) / 100
		if before < at && after >= at {
			out = append(out, t)
		}
	}
	return out
}

// ParseUSD reads an amount of US dollars ("12.5", "0.000001") as
// micro-dollars: at most six decimals, not negative.
func ParseUSD(field string, v float64) (MicroUSD, error) {
	if v < 0 || v != v || v > 1e9 {
		return 0, domain.Invalid("invalid_max_budget", field, "%s must be an amount of US dollars from 0 to 1000000000; got %v", field, v)
	}
	m := MicroUSD(v*1e6 + 0.5)
	if diff := float64(m) - v*1e6; diff > 0.01 || diff < -0.01 {
		return 0, domain.Invalid("invalid_max_budget", field, "%s has more than six decimals: %v", field, v)
	}
	return m, nil
}

// Describe is the limits in words, for listings and mails.
func (l KeyLimits) Describe() string {
	var parts []string
	if l.MaxBudget > 0 {
		parts = append(parts, fmt.Sprintf("$%s/%s", l.MaxBudget.USD(), l.Period))
	}
	if l.RPM > 0 {
		parts = append(parts, fmt.Sprintf("%d rpm", l.RPM))
	}
	if l.TPM > 0 {
		parts = append(parts, fmt.Sprintf("%d tpm", l.TPM))
	}
	if len(l.Models) > 0 {
		parts = append(parts, "models "+strings.Join(l.Models, ","))
	}
	if l.ExpiresAt != nil {
		parts = append(parts, "expires "+l.ExpiresAt.Format(time.RFC3339))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
