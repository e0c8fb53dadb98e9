package answer

import (
	"net"
	"strings"
	"time"

	"github.com/arr-dev/arr/domain"
)

// MaxDomains is the most names include_domains or exclude_domains may
// hold.
const MaxDomains = 20

// DateLayout is the layout of a published date and of start_date and
// end_date: an RFC 3339 full-date, "YYYY-MM-DD".
const DateLayout = "2006-01-02"

// TimeRange is a window relative to now.
type TimeRange string

// Time ranges.
const (
	PastDay   TimeRange = "day"
	PastWeek  TimeRange = "week"
	PastMonth TimeRange = "month"
	PastYear  TimeRange = "year"
)

// Filters narrow the sources an answer may cite: to some hosts, away from
// some hosts, and to a window of published dates. The zero value filters
// nothing.
type Filters struct {
	// IncludeDomains are host names (lower case, ASCII: an IDN in its
	// punycode form); when any, only sources on one of them, or on a
	// subdomain of one, are cited.
	IncludeDomains []string `json:"include_domains,omitempty"`
	// ExcludeDomains are host names no cited source is on (nor on a
	// subdomain of one).
	ExcludeDomains []string `json:"exclude_domains,omitempty"`
	// TimeRange is the relative window asked for, if any; StartDate and
	// EndDate hold the dates it resolved to when the request was parsed.
	TimeRange TimeRange `json:"time_range,omitempty"`
	// StartDate is the first published date ("YYYY-MM-DD", UTC) a cited
	// source may have; empty is unbounded. A source with no date is left
	// out when StartDate or EndDate is set.
	StartDate string `json:"start_date,omitempty"`
	// EndDate is the last published date ("YYYY-MM-DD", inclusive, UTC) a
	// cited source may have; empty is unbounded.
	EndDate string `json:"end_date,omitempty"`
}

// FilterInput is the filters as a client sent them.
type FilterInput struct {
	IncludeDomains []string
	ExcludeDomains []string
	TimeRange      string
	StartDate      string
	EndDate        string
}

// ParseFilters validates in and resolves a time range against now. Errors
// are domain validation errors naming the field.
func ParseFilters(in FilterInput, now time.Time) (Filters, error) {
	var f Filters
	var err error
	if f.IncludeDomains, err = parseDomains("include_domains", in.IncludeDomains); err != nil {
		return Filters{}, err
	}
	if f.ExcludeDomains, err = parseDomains("exclude_domains", in.ExcludeDomains); err != nil {
		return Filters{}, err
	}
	for _, d := range f.ExcludeDomains {
		for _, i := range f.IncludeDomains {
			if d == i {
				return Filters{}, domain.Invalid("domain_in_both_lists", "exclude_domains", "%q is in both include_domains and exclude_domains; name it in one of them", d)
			}
		}
	}
	tr := strings.TrimSpace(in.TimeRange)
	start, end := strings.TrimSpace(in.StartDate), strings.TrimSpace(in.EndDate)
	if tr != "" && (start != "" || end != "") {
		return Filters{}, domain.Invalid("time_range_with_dates", "time_range", "send either time_range or start_date/end_date, not both")
	}
	today := now.UTC().Truncate(24 * time.Hour)
	switch TimeRange(tr) {
	case "":
	case PastDay:
		f.StartDate = today.AddDate(0, 0, -1).Format(DateLayout)
	case PastWeek:
		f.StartDate = today.AddDate(0, 0, -7).Format(DateLayout)
	case PastMonth:
		f.StartDate = today.AddDate(0, -1, 0).Format(DateLayout)
	case PastYear:
		f.StartDate = today.AddDate(-1, 0, 0).Format(DateLayout)
	default:
		return Filters{}, domain.Invalid("invalid_time_range", "time_range", "time_range must be day, week, month or year; got %q", in.TimeRange)
	}
	if tr != "" {
		f.TimeRange, f.EndDate = TimeRange(tr), today.Format(DateLayout)
		return f, nil
	}
	if start != "" {
		if _, err := time.Parse(DateLayout, start); err != nil {
			return Filters{}, domain.Invalid("invalid_start_date", "start_date", "start_date must be a date YYYY-MM-DD, like 2024-01-31; got %q", in.StartDate)
		}
		f.StartDate = start
	}
	if end != "" {
		if _, err := time.Parse(DateLayout, end); err != nil {
			return Filters{}, domain.Invalid("invalid_end_date", "end_date", "end_date must be a date YYYY-MM-DD, like 2024-12-31; got %q", in.EndDate)
		}
		f.EndDate = end
	}
	if start != "" && end != "" && start > end {
		return Filters{}, domain.Invalid("start_after_end", "start_date", "start_date %s is after end_date %s; the window is inclusive, so start_date must be on or before end_date", start, end)
	}
	return f, nil
}

// parseDomains validates a list of host names: trimmed, lower case,
// punycode, no duplicates.
func parseDomains(field string, names []string) ([]string, error) {
	if len(names) > MaxDomains {
		return nil, domain.Invalid(field+"_too_many", field, "%s holds %d names; at most %d are allowed", field, len(names), MaxDomains)
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		h, ok := NormalizeHost(n)
		if !ok {
			return nil, domain.Invalid("invalid_"+field, field, "%s: %q is not a host name; send a bare name like example.com (no scheme, port, path or wildcard)", field, n)
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out, nil
}

// NormalizeHost returns a host name as compared: trimmed, a trailing dot
// dropped, lower case; an IP address in its canonical form, including
// the IPv4 shorthands URL parsers take (a host whose last label is a
// number, 127.1, 2130706433, 0x7f.1, 0177.0.0.1, is the address
// 127.0.0.1 or, when it is none, refused): a host is either a canonical
// IP or a name whose last label is not numeric. ok is false
// for anything else: a scheme, port, path, wildcard, an empty label or
// one over 63 bytes, a character outside a-z, 0-9 and '-' (an
// internationalized name must come in its ASCII form, xn--…: the caller
// converts it, as research.ASCIIName does).
func NormalizeHost(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(s), "."))
	if s == "" || len(s) > 253 {
		return "", false
	}
	if ip := net.ParseIP(s); ip != nil {
		return ip.String(), true
	}
	if endsInNumber(s) {
		// Not a name: the address URL parsers read (127.1 is 127.0.0.1),
		// or nothing.
		ip, ok := parseWHATWGIPv4(s)
		if !ok {
			return "", false
		}
		return ip.String(), true
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "", false
			}
		}
	}
	return s, true
}

// Covers reports whether name covers host: host is name or a subdomain of
// it (example.com covers docs.example.com, not evil-example.com). Both
// are as NormalizeHost returns them.
func Covers(name, host string) bool {
	if name == "" || host == "" {
		return false
	}
	if net.ParseIP(name) != nil || net.ParseIP(host) != nil {
		return host == name // an address has no subdomains
	}
	return host == name || strings.HasSuffix(host, "."+name)
}

// Any reports whether the filters narrow anything.
func (f Filters) Any() bool {
	return len(f.IncludeDomains) > 0 || len(f.ExcludeDomains) > 0 || f.Dated()
}

// Dated reports whether a window of dates is asked for.
func (f Filters) Dated() bool { return f.StartDate != "" || f.EndDate != "" }

// AllowsHost reports whether a source on host (as NormalizeHost returns
// it, without port) passes the domain filters. A source with no host ("":
// a local file of the index) is never covered by a name: include_domains
// leaves it out, exclude_domains keeps it.
func (f Filters) AllowsHost(host string) bool {
	if len(f.IncludeDomains) == 0 && len(f.ExcludeDomains) == 0 {
		return true
	}
	for _, d := range f.ExcludeDomains {
		if Covers(d, host) {
			return false
		}
	}
	if len(f.IncludeDomains) == 0 {
		return true
	}
	for _, d := range f.IncludeDomains {
		if Covers(d, host) {
			return true
		}
	}
	return false
}

// AllowsDate reports whether a source published on date ("YYYY-MM-DD" or
// "" for none) is inside the window; with a window, an undated source is
// not.
func (f Filters) AllowsDate(date string) bool {
	if !f.Dated() {
		return true
	}
	if date == "" {
		return false
	}
	return (f.StartDate == "" || date >= f.StartDate) && (f.EndDate == "" || date <= f.EndDate)
}

// Allows reports whether a source on host published on date passes every
// filter.
func (f Filters) Allows(host, date string) bool { return f.AllowsHost(host) && f.AllowsDate(date) }

// key is the filters' part of a cache key ("" when none).
func (f Filters) key() string {
	if !f.Any() {
		return ""
	}
	return "\x00in=" + strings.Join(f.IncludeDomains, ",") + "\x00ex=" + strings.Join(f.ExcludeDomains, ",") +
		"\x00from=" + f.StartDate + "\x00to=" + f.EndDate
}
