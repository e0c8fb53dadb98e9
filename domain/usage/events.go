package usage

import (
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
)

// DayLayout is how a UTC day is written in events and JSON (RFC 3339
// full-date).
const DayLayout = "2006-01-02"

// CallsCounted: a key made Calls more requests on Service during the UTC day
// Day that its plan's quota admitted. A day's total is the sum of its
// events; the meter batches requests, so one event may count many calls.
type CallsCounted struct {
	// AccountID is the account the calls are billed to.
	AccountID uuid.UUID `json:"account_id"`
	// KeyID is the key that made the calls.
	KeyID uuid.UUID `json:"key_id"`
	// Service is the service called.
	Service account.Service `json:"service"`
	// Day is the UTC day counted, as 2006-01-02.
	Day string `json:"day"`
	// Calls is how many more admitted calls this event counts (positive);
	// the day's total is the sum over its events.
	Calls int64 `json:"calls"`
	// CountedAt is when the meter flushed the count (UTC).
	CountedAt time.Time `json:"counted_at"`
}

func (CallsCounted) EventType() string  { return "CallsCounted" }
func (CallsCounted) SchemaVersion() int { return 1 }

// Events lists constructors for every event of this package, for a
// domain.Registry.
func Events() []func() domain.Event {
	return []func() domain.Event{func() domain.Event { return &CallsCounted{} }, func() domain.Event { return &BudgetThresholdCrossed{} }}
}

// Day is the UTC day that holds t, as written in events.
func Day(t time.Time) string { return t.UTC().Format(DayLayout) }

// StreamID is the stream of one account's counts of one UTC day: short
// streams, all in the "usage" category.
func StreamID(accountID uuid.UUID, day string) string {
	return "usage-" + accountID.String() + "-" + day
}

// Count decides a CallsCounted event, refusing what cannot be a count.
func Count(accountID, keyID uuid.UUID, svc account.Service, day string, calls int64, at time.Time) (*CallsCounted, error) {
	if accountID == uuid.Nil || keyID == uuid.Nil {
		return nil, domain.Invalid("usage_without_key", "key_id", "a usage count needs an account and a key")
	}
	if _, err := account.ParseService(string(svc)); err != nil {
		return nil, err
	}
	if _, err := time.Parse(DayLayout, day); err != nil {
		return nil, domain.Invalid("invalid_day", "day", "day must be a UTC date like 2026-11-22; got %q", day)
	}
	if calls <= 0 {
		return nil, domain.Invalid("invalid_calls", "calls", "a usage count must be positive; got %d", calls)
	}
	return &CallsCounted{AccountID: accountID, KeyID: keyID, Service: svc, Day: day, Calls: calls, CountedAt: at.UTC()}, nil
}
