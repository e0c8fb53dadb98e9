package replica

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// The lag is the age of the oldest sample of the primary past the
// replica's replay position.
func TestLag(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	r := &Router{samples: []sample{{t0, 100}, {t0.Add(time.Second), 200}, {t0.Add(2 * time.Second), 300}}}
	now := t0.Add(3 * time.Second)
	for _, c := range []struct {
		replay int64
		want   time.Duration
	}{{300, 0}, {350, 0}, {250, time.Second}, {150, 2 * time.Second}, {50, 3 * time.Second}} {
		if got := r.lag(now, c.replay); got != c.want {
			t.Errorf("replay at %d: lag %s, want %s", c.replay, got, c.want)
		}
	}
}

// A query's own failure is not the replica's absence; a connection that
// cannot be made or broke, or a server shutting down, is.
func TestUnreachable(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		err  error
		want bool
	}{
		{errors.New("dial tcp 127.0.0.1:5433: connect: connection refused"), true},
		{&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, true},
		{&pgconn.PgError{Code: "08006", Message: "connection failure"}, true},
		{&pgconn.PgError{Code: "42P01", Message: "relation does not exist"}, false},
		{&pgconn.PgError{Code: "40001", Message: "canceling statement due to conflict with recovery"}, false},
	} {
		if got := unreachable(ctx, c.err); got != c.want {
			t.Errorf("%v: unreachable %v, want %v", c.err, got, c.want)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if unreachable(cancelled, errors.New("context canceled")) {
		t.Error("a cancelled request's error is not the replica's absence")
	}
}
