package usage

import (
	"time"

	"github.com/arr-dev/arr/domain"
)

// MaxReportDays bounds a usage report's window.
const MaxReportDays = 366

// DayRange returns the first and last UTC day (DayLayout) of the `days`
// days that end with now's day; days outside 1..MaxReportDays is invalid
// input.
func DayRange(days int, now time.Time) (first, last string, err error) {
	if days < 1 || days > MaxReportDays {
		return "", "", domain.Invalid("invalid_days", "days", "days must be between 1 and %d; got %d", MaxReportDays, days)
	}
	end := now.UTC().Truncate(24 * time.Hour)
	return end.AddDate(0, 0, -(days - 1)).Format(DayLayout), end.Format(DayLayout), nil
}
