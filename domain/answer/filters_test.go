package answer_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
)

func TestCoversHosts(t *testing.T) {
	tests := []struct {
		name, list, host string
		want             bool
	}{
		{"the name itself", "example.com", "example.com", true},
		{"a subdomain", "example.com", "docs.example.com", true},
		{"a deep subdomain", "example.com", "a.b.example.com", true},
		{"a look-alike is not covered", "example.com", "evil-example.com", false},
		{"a suffix without the dot is not covered", "example.com", "notexample.com", false},
		{"the parent is not covered by the child", "docs.example.com", "example.com", false},
		{"a name as a subdomain of another", "example.com", "example.com.evil.org", false},
		{"upper case host", "example.com", "DOCS.EXAMPLE.COM", true},
		{"upper case name", "EXAMPLE.com", "docs.example.com", true},
		{"punycode", "xn--bcher-kva.de", "www.xn--bcher-kva.de", true},
		{"an IP literal", "127.0.0.1", "127.0.0.1", true},
		{"an IP is not a suffix", "0.0.1", "127.0.0.1", false},
		{"IPv6 forms", "0:0:0:0:0:0:0:1", "::1", true},
		{"a trailing dot", "example.com.", "example.com.", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := answer.ParseFilters(answer.FilterInput{IncludeDomains: []string{tc.list}}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			host, ok := answer.NormalizeHost(tc.host)
			if !ok {
				t.Fatalf("host %q refused", tc.host)
			}
			if got := f.AllowsHost(host); got != tc.want {
				t.Fatalf("include %q, host %s: %v, want %v", tc.list, tc.host, got, tc.want)
			}
			f, _ = answer.ParseFilters(answer.FilterInput{ExcludeDomains: []string{tc.list}}, time.Now())
			if got := f.AllowsHost(host); got == tc.want {
				t.Fatalf("exclude %q, host %s: %v, want %v", tc.list, tc.host, got, !tc.want)
			}
		})
	}
	f, _ := answer.ParseFilters(answer.FilterInput{IncludeDomains: []string{"example.com"}}, time.Now())
	if f.AllowsHost("") {
		t.Fatal("include_domains kept a source with no host")
	}
	f, _ = answer.ParseFilters(answer.FilterInput{ExcludeDomains: []string{"example.com"}}, time.Now())
	if !f.AllowsHost("") {
		t.Fatal("exclude_domains dropped a source with no host")
	}
}

func TestParseFiltersRefuses(t *testing.T) {
	now := time.Date(2026, 3, 15, 10, 0, 0, 0, time.UTC)
	many := make([]string, 21)
	for i := range many {
		many[i] = "a" + strings.Repeat("b", i) + ".com"
	}
	tests := []struct {
		name        string
		in          answer.FilterInput
		code, field string
	}{
		{"a scheme", answer.FilterInput{IncludeDomains: []string{"https://example.com"}}, "invalid_include_domains", "include_domains"},
		{"a port", answer.FilterInput{IncludeDomains: []string{"example.com:443"}}, "invalid_include_domains", "include_domains"},
		{"a path", answer.FilterInput{ExcludeDomains: []string{"example.com/docs"}}, "invalid_exclude_domains", "exclude_domains"},
		{"a wildcard", answer.FilterInput{ExcludeDomains: []string{"*.example.com"}}, "invalid_exclude_domains", "exclude_domains"},
		{"empty", answer.FilterInput{IncludeDomains: []string{" "}}, "invalid_include_domains", "include_domains"},
		{"an empty label", answer.FilterInput{IncludeDomains: []string{"a..com"}}, "invalid_include_domains", "include_domains"},
		{"a label over 63", answer.FilterInput{IncludeDomains: []string{strings.Repeat("a", 64) + ".com"}}, "invalid_include_domains", "include_domains"},
		{"a leading hyphen", answer.FilterInput{IncludeDomains: []string{"-a.com"}}, "invalid_include_domains", "include_domains"},
		{"an underscore", answer.FilterInput{IncludeDomains: []string{"a_b.com"}}, "invalid_include_domains", "include_domains"},
		{"a NUL", answer.FilterInput{IncludeDomains: []string{"a\x00.com"}}, "invalid_include_domains", "include_domains"},
		{"an IDN not converted", answer.FilterInput{IncludeDomains: []string{"bücher.de"}}, "invalid_include_domains", "include_domains"},
		{"user info", answer.FilterInput{IncludeDomains: []string{"user@example.com"}}, "invalid_include_domains", "include_domains"},
		{"21 names", answer.FilterInput{IncludeDomains: many}, "include_domains_too_many", "include_domains"},
		{"21 excluded", answer.FilterInput{ExcludeDomains: many}, "exclude_domains_too_many", "exclude_domains"},
		{"in both lists", answer.FilterInput{IncludeDomains: []string{"Example.com"}, ExcludeDomains: []string{"example.COM"}}, "domain_in_both_lists", "exclude_domains"},
		{"a bad range", answer.FilterInput{TimeRange: "decade"}, "invalid_time_range", "time_range"},
		{"a range and a date", answer.FilterInput{TimeRange: "week", StartDate: "2026-01-01"}, "time_range_with_dates", "time_range"},
		{"a bad start", answer.FilterInput{StartDate: "2026-13-01"}, "invalid_start_date", "start_date"},
		{"a start with a time", answer.FilterInput{StartDate: "2026-01-01T00:00:00Z"}, "invalid_start_date", "start_date"},
		{"a bad end", answer.FilterInput{EndDate: "yesterday"}, "invalid_end_date", "end_date"},
		{"start after end", answer.FilterInput{StartDate: "2026-02-02", EndDate: "2026-02-01"}, "start_after_end", "start_date"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := answer.ParseFilters(tc.in, now)
			var de *domain.Error
			if !errors.As(err, &de) || !errors.Is(err, domain.ErrInvalid) || de.Code != tc.code || de.Field != tc.field || de.Message == "" {
				t.Fatalf("got %v, want %s on %s", err, tc.code, tc.field)
			}
		})
	}
}

func TestParseFiltersWindow(t *testing.T) {
	now := time.Date(2026, 3, 15, 23, 30, 0, 0, time.FixedZone("x", -5*3600)) // 2026-03-16 04:30 UTC
	tests := []struct {
		in         answer.FilterInput
		start, end string
	}{
		{answer.FilterInput{TimeRange: "day"}, "2026-03-15", "2026-03-16"},
		{answer.FilterInput{TimeRange: "week"}, "2026-03-09", "2026-03-16"},
		{answer.FilterInput{TimeRange: "month"}, "2026-02-16", "2026-03-16"},
		{answer.FilterInput{TimeRange: "year"}, "2025-03-16", "2026-03-16"},
		{answer.FilterInput{StartDate: "2024-01-01"}, "2024-01-01", ""},
		{answer.FilterInput{StartDate: "2024-01-01", EndDate: "2024-01-01"}, "2024-01-01", "2024-01-01"},
	}
	for _, tc := range tests {
		f, err := answer.ParseFilters(tc.in, now)
		if err != nil || f.StartDate != tc.start || f.EndDate != tc.end {
			t.Fatalf("%+v: %+v %v, want %s..%s", tc.in, f, err, tc.start, tc.end)
		}
	}
	f, _ := answer.ParseFilters(answer.FilterInput{StartDate: "2024-01-01", EndDate: "2024-01-31"}, now)
	for date, want := range map[string]bool{"2024-01-01": true, "2024-01-31": true, "2023-12-31": false, "2024-02-01": false, "": false} {
		if f.AllowsDate(date) != want {
			t.Fatalf("%q: %v", date, !want)
		}
	}
	if !(answer.Filters{}).AllowsDate("") {
		t.Fatal("no window: an undated source is kept")
	}
	f, _ = answer.ParseFilters(answer.FilterInput{IncludeDomains: []string{"B.com", "a.com", "b.com"}}, now)
	if !reflect.DeepEqual(f.IncludeDomains, []string{"b.com", "a.com"}) {
		t.Fatalf("names: %v", f.IncludeDomains)
	}
}

func TestFiltersInCacheKey(t *testing.T) {
	base, _ := answer.ParseRequest("what is arr", true, "", "")
	keys := map[string]string{"none": base.CacheKey()}
	now := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	for name, in := range map[string]answer.FilterInput{
		"include": {IncludeDomains: []string{"a.com"}}, "exclude": {ExcludeDomains: []string{"a.com"}},
		"week": {TimeRange: "week"}, "month": {TimeRange: "month"}, "start": {StartDate: "2026-03-08"},
	} {
		r := base
		r.Filters, _ = answer.ParseFilters(in, now)
		keys[name] = r.CacheKey()
	}
	seen := map[string]string{}
	for name, k := range keys {
		if other, ok := seen[k]; ok {
			t.Fatalf("%s and %s share a cache key", name, other)
		}
		seen[k] = name
	}
	// A time range asked on another day is another window, so another key.
	r := base
	r.Filters, _ = answer.ParseFilters(answer.FilterInput{TimeRange: "week"}, now.AddDate(0, 0, 1))
	if r.CacheKey() == keys["week"] {
		t.Fatal("time_range=week asked a day later shares the key")
	}
	// The same window however it was asked is the same answer.
	r.Filters, _ = answer.ParseFilters(answer.FilterInput{StartDate: "2026-03-08", EndDate: "2026-03-15"}, now)
	if r.CacheKey() != keys["week"] {
		t.Fatal("time_range=week and its dates differ")
	}
}

// TestNormalizeHostNumeric: a host whose last label is a number is the
// IPv4 address URL parsers read, or refused; never a name.
func TestNormalizeHostNumeric(t *testing.T) {
	for in, want := range map[string]string{
		"127.1": "127.0.0.1", "2130706433": "127.0.0.1", "0x7f.1": "127.0.0.1", "0177.0.0.1": "127.0.0.1",
		"0x7F000001": "127.0.0.1", "10.0.258": "10.0.1.2", "1.2.3.4.": "1.2.3.4", "example.com": "example.com",
		"a1.b2": "a1.b2", "1a.com": "1a.com",
	} {
		if got, ok := answer.NormalizeHost(in); !ok || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"256.1.1.1", "1.2.3.4.5", "4294967296", "example.09", "08.1"} {
		if got, ok := answer.NormalizeHost(in); ok {
			t.Errorf("%q: accepted as %q", in, got)
		}
	}
}
