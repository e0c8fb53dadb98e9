package date_test

import (
	"errors"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/date"
)

func TestDayAndInstant(t *testing.T) {
	for _, tc := range []struct {
		name, v string
		instant bool
		ok      bool
	}{
		{name: "a date", v: "2026-12-01", ok: true},
		{name: "the first day", v: "1900-01-01", ok: true},
		{name: "the last day", v: "9999-12-31", ok: true},
		{name: "year zero", v: "0000-01-01"},
		{name: "before 1900", v: "1899-12-31"},
		{name: "not a date", v: "2026-02-30"},
		{name: "a time for a date", v: "2026-12-01T00:00:00Z"},
		{name: "an instant", v: "2026-12-31T00:00:00Z", instant: true, ok: true},
		{name: "an instant with an offset", v: "9999-12-31T20:00:00-05:00", instant: true},
		{name: "an instant in year zero", v: "0000-01-01T00:00:00Z", instant: true},
		{name: "a date for an instant", v: "2026-12-31", instant: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := date.Day
			if tc.instant {
				read = date.Instant
			}
			got, err := read("as_of", tc.v)
			if tc.ok != (err == nil) {
				t.Fatalf("%q: %v, %v", tc.v, got, err)
			}
			var de *domain.Error
			if err != nil && (!errors.As(err, &de) || de.Code != "invalid_as_of" || de.Field != "as_of" || !errors.Is(err, domain.ErrInvalid)) {
				t.Fatalf("%q: error %v", tc.v, err)
			}
			if err == nil && got.Location().String() != "UTC" {
				t.Fatalf("%q: %v not in UTC", tc.v, got)
			}
		})
	}
}
