package ratelimit

import (
	"context"
	"net/netip"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/account"
)

// Window is a fixed counting window [Start, End).
type Window struct {
	Start, End time.Time
}

// DayWindow is the UTC day that holds t.
func DayWindow(t time.Time) Window {
	s := t.UTC().Truncate(24 * time.Hour)
	return Window{Start: s, End: s.Add(24 * time.Hour)}
}

// HourWindow is the clock hour (UTC) that holds t.
func HourWindow(t time.Time) Window {
	s := t.UTC().Truncate(time.Hour)
	return Window{Start: s, End: s.Add(time.Hour)}
}

// RetryAfter is the whole number of seconds from now until the window ends,
// rounded up and at least 1: the value of a Retry-After header.
func (w Window) RetryAfter(now time.Time) int64 {
	d := w.End.Sub(now)
	s := int64(d / time.Second)
	if d%time.Second > 0 {
		s++
	}
	return max(s, 1)
}

// Result is the outcome of one Take.
type Result struct {
	// Allowed is true when the request was counted and may proceed.
	Allowed bool
	// Limit is the window's limit.
	Limit int64
	// Remaining is how many more requests the window admits after this one.
	Remaining int64
	// Window is the window the request was counted in.
	Window Window
}

// Limiter counts requests in fixed windows. Implementations are safe for
// concurrent use and exact: Take admits a request if and only if fewer than
// limit requests were admitted in the bucket's window before it, atomically,
// whatever the number of concurrent callers and processes.
type Limiter interface {
	// Take counts one request against bucket in window w if the window has
	// admitted fewer than limit; otherwise it counts nothing and returns
	// Allowed false. A limit below 1 admits nothing.
	Take(ctx context.Context, bucket string, w Window, limit int64) (Result, error)
	// Give gives back one request Take admitted in bucket's window w (the
	// request was refused for its own fault and is not served), so the
	// window admits one more. The count never goes below zero.
	Give(ctx context.Context, bucket string, w Window) error
}

// AccountBucket names the counter of an account on a service.
func AccountBucket(svc account.Service, accountID uuid.UUID) string {
	return string(svc) + ":account:" + accountID.String()
}

// KeyBucket names the counter of an API key on a service.
func KeyBucket(svc account.Service, keyID uuid.UUID) string {
	return string(svc) + ":key:" + keyID.String()
}

// IPBucket names the counter of a client address on a service's public
// endpoints. IPv6 clients are counted by their /64, which one host usually
// has to itself; an address that does not parse is counted as given.
func IPBucket(svc account.Service, ip string) string {
	if a, err := netip.ParseAddr(ip); err == nil {
		a = a.Unmap()
		if a.Is6() {
			p, _ := a.Prefix(64)
			return string(svc) + ":ip:" + p.String()
		}
		return string(svc) + ":ip:" + a.String()
	}
	return string(svc) + ":ip:" + ip
}

func denied(w Window, limit int64) Result {
	return Result{Allowed: false, Limit: limit, Remaining: 0, Window: w}
}

func admitted(w Window, limit, count int64) Result {
	return Result{Allowed: true, Limit: limit, Remaining: max(limit-count, 0), Window: w}
}

func unixString(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
