package date

import (
	"time"

	"github.com/arr-dev/arr/domain"
)

// inRange reports whether t is in the range every date and time a caller
// sends must fall in, both ends included: from 1900-01-01 to 9999-12-31
// (UTC).
func inRange(t time.Time) bool {
	return !t.Before(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)) && !t.After(time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC))
}

// Earliest and Latest are the range's ends, as the error messages and the
// OpenAPI documents write them.
const (
	Earliest = "1900-01-01"
	Latest   = "9999-12-31"
)

// Day reads v, the value of the parameter field, as a calendar date
// YYYY-MM-DD from Earliest to Latest; anything else is a domain validation
// error with code invalid_<field> on field. The date is midnight UTC.
func Day(field, v string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, v)
	if err != nil || !inRange(t) {
		return time.Time{}, domain.Invalid("invalid_"+field, field, "%s must be a date YYYY-MM-DD from %s to %s; got %q", field, Earliest, Latest, v)
	}
	return t, nil
}

// Instant reads v, the value of the parameter field, as an RFC 3339 time
// (with its offset) from Earliest to Latest, returned in UTC; anything
// else is a domain validation error with code invalid_<field> on field.
func Instant(field, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err == nil {
		t = t.UTC()
	}
	if err != nil || !inRange(t) {
		return time.Time{}, domain.Invalid("invalid_"+field, field, "%s must be an RFC 3339 time like 2026-12-31T00:00:00Z, from %s to %s; got %q", field, Earliest, Latest, v)
	}
	return t, nil
}
