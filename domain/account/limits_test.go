package account_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestPeriodWindows(t *testing.T) {
	tests := []struct {
		name       string
		p          account.Period
		at         string
		start, end string
	}{
		{"day", account.PeriodDay, "2026-11-27T22:13:09Z", "2026-11-27T00:00:00Z", "2026-11-28T00:00:00Z"},
		{"day at midnight", account.PeriodDay, "2026-11-27T00:00:00Z", "2026-11-27T00:00:00Z", "2026-11-28T00:00:00Z"},
		{"day just before midnight", account.PeriodDay, "2026-11-27T23:59:59.999Z", "2026-11-27T00:00:00Z", "2026-11-28T00:00:00Z"},
		{"day of another zone is UTC's", account.PeriodDay, "2026-11-28T01:00:00+05:00", "2026-11-27T00:00:00Z", "2026-11-28T00:00:00Z"},
		{"week on a Friday", account.PeriodWeek, "2026-11-27T12:00:00Z", "2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z"},
		{"week on a Monday", account.PeriodWeek, "2026-11-23T00:00:00Z", "2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z"},
		{"week on a Sunday", account.PeriodWeek, "2026-11-29T23:59:59Z", "2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z"},
		{"week across a year", account.PeriodWeek, "2027-01-01T08:00:00Z", "2026-12-28T00:00:00Z", "2027-01-04T00:00:00Z"},
		{"month", account.PeriodMonth, "2026-11-27T12:00:00Z", "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z"},
		{"December", account.PeriodMonth, "2026-12-31T23:59:59Z", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"February of a leap year", account.PeriodMonth, "2028-02-29T10:00:00Z", "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z"},
		{"total", account.PeriodTotal, "2026-11-27T12:00:00Z", "1970-01-01T00:00:00Z", "9999-12-31T00:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, e := tc.p.Window(utc(tc.at))
			if !s.Equal(utc(tc.start)) || !e.Equal(utc(tc.end)) {
				t.Errorf("%s window of %s = [%s, %s); want [%s, %s)", tc.p, tc.at, s, e, tc.start, tc.end)
			}
			if s.Location() != time.UTC {
				t.Errorf("the window is not in UTC: %s", s.Location())
			}
		})
	}
}

func TestCrossedThresholds(t *testing.T) {
	tests := []struct {
		name                 string
		before, after, limit account.MicroUSD
		want                 []int
	}{
		{"below half", 0, 499_999, 1_000_000, nil},
		{"exactly half", 0, 500_000, 1_000_000, []int{50}},
		{"half and 80 at once", 400_000, 850_000, 1_000_000, []int{50, 80}},
		{"already past half", 500_000, 700_000, 1_000_000, nil},
		{"all three", 0, 2_000_000, 1_000_000, []int{50, 80, 100}},
		{"the last micro-dollar", 999_999, 1_000_000, 1_000_000, []int{100}},
		{"an odd budget rounds the mark up", 0, 2, 3, []int{50}}, // 50% of 3 is 1.5: 2 has crossed it
		{"nothing spent", 300, 300, 1_000, nil},
		{"no budget", 0, 10, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := account.Crossed(tc.before, tc.after, tc.limit); !slices.Equal(got, tc.want) {
				t.Errorf("Crossed(%d, %d, %d) = %v; want %v", tc.before, tc.after, tc.limit, got, tc.want)
			}
		})
	}
}

func TestLimitsChangeKeepsWhatItDoesNotName(t *testing.T) {
	at := utc("2027-01-01T00:00:00Z")
	five, rpm := account.MicroUSD(5_000_000), int64(3)
	week := account.PeriodWeek
	l := account.LimitsChange{MaxBudget: &five, RPM: &rpm}.Apply(account.KeyLimits{TPM: 100, Models: []string{"nano"}, ExpiresAt: &at})
	if l.MaxBudget != five || l.Period != account.PeriodMonth || l.RPM != 3 || l.TPM != 100 || !slices.Equal(l.Models, []string{"nano"}) || !l.ExpiresAt.Equal(at) {
		t.Fatalf("after setting a budget and rpm: %+v", l)
	}
	l = account.LimitsChange{Period: &week}.Apply(l)
	if l.Period != week || l.MaxBudget != five {
		t.Fatalf("after setting the period: %+v", l)
	}
	zero, none := account.MicroUSD(0), []string{}
	var never *time.Time
	l = account.LimitsChange{MaxBudget: &zero, Models: &none, ExpiresAt: &never}.Apply(l)
	if l.MaxBudget != 0 || l.Period != "" || len(l.Models) != 0 || l.ExpiresAt != nil || l.RPM != 3 {
		t.Fatalf("after clearing the budget, the models and the expiry: %+v", l)
	}
}

func TestLimitsValidate(t *testing.T) {
	known := func(s string) bool { return s == "nano" || s == "gpt-4.1-nano" }
	tests := []struct {
		name string
		l    account.KeyLimits
		code string
	}{
		{"none", account.KeyLimits{}, ""},
		{"all", account.KeyLimits{MaxBudget: 1, Period: account.PeriodDay, RPM: 1, TPM: 1, Models: []string{"nano", "gpt-4.1-nano"}}, ""},
		{"a budget without a known period", account.KeyLimits{MaxBudget: 1, Period: "year"}, "invalid_budget_period"},
		{"a negative budget", account.KeyLimits{MaxBudget: -1}, "invalid_max_budget"},
		{"a negative rate", account.KeyLimits{RPM: -1}, "invalid_rate_limit"},
		{"an unknown model", account.KeyLimits{Models: []string{"gpt-9"}}, "unknown_model"},
		{"a model twice", account.KeyLimits{Models: []string{"nano", "nano"}}, "invalid_models"},
		{"a comma in a model", account.KeyLimits{Models: []string{"nano,high"}}, "invalid_models"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.l.Validate(known)
			var de *domain.Error
			switch {
			case tc.code == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.code != "" && (!errors.As(err, &de) || de.Code != tc.code || !errors.Is(err, domain.ErrInvalid)):
				t.Fatalf("got %v; want %s", err, tc.code)
			}
		})
	}
}

func TestParseUSD(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want account.MicroUSD
		ok   bool
	}{{12.5, 12_500_000, true}, {0.000001, 1, true}, {0.1, 100_000, true}, {0, 0, true}, {-1, 0, false}, {0.0000001, 0, false}} {
		got, err := account.ParseUSD("max_budget_usd", tc.v)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseUSD(%v) = %d, %v; want %d (ok %v)", tc.v, got, err, tc.want, tc.ok)
		}
	}
}

func TestKeyLimitsDecisions(t *testing.T) {
	now := utc("2026-11-27T12:00:00Z")
	a := account.New(account.IDForEmail("a@example.com"))
	a.Apply(&account.AccountCreated{AccountID: a.ID(), Email: "a@example.com", Plan: account.Free, CreatedAt: now})
	secret, err := account.NewSecret(account.Gateway)
	if err != nil {
		t.Fatal(err)
	}
	key := uuid.New()
	evs, err := a.IssueLimitedKey(key, account.Gateway, secret, "ci", account.KeyLimits{RPM: 3}, nil, now)
	if err != nil || len(evs) != 2 {
		t.Fatalf("issuing a limited key: %v, %d events", err, len(evs))
	}
	set, ok := evs[1].(*account.KeyLimitsSet)
	if !ok || set.RPMLimit != 3 || set.KeyID != key {
		t.Fatalf("second event %#v", evs[1])
	}
	for _, e := range evs {
		a.Apply(e)
	}
	rpm := int64(3)
	if evs, err := a.ChangeKeyLimits(key, account.LimitsChange{RPM: &rpm}, nil, now); err != nil || len(evs) != 0 {
		t.Fatalf("the same limits again: %v, %d events (want none)", err, len(evs))
	}
	tpm := int64(1000)
	evs, err = a.ChangeKeyLimits(key, account.LimitsChange{TPM: &tpm}, nil, now)
	if err != nil || len(evs) != 1 || evs[0].(*account.KeyLimitsSet).RPMLimit != 3 || evs[0].(*account.KeyLimitsSet).TPMLimit != 1000 {
		t.Fatalf("changing tpm: %v %#v", err, evs)
	}
	if _, err := a.ChangeKeyLimits(uuid.New(), account.LimitsChange{TPM: &tpm}, nil, now); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another key: %v", err)
	}
	if _, err := a.IssueLimitedKey(uuid.New(), account.Records, secret, "", account.KeyLimits{RPM: 1}, nil, now); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("a records key with limits: %v", err)
	}
	evs, err = a.SetBudget(account.Budget{Max: 1_000_000, Period: account.PeriodMonth}, now)
	if err != nil || len(evs) != 1 {
		t.Fatalf("a budget: %v", err)
	}
}
