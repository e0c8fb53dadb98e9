package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/arr-dev/arr/commands/spend"
	"github.com/arr-dev/arr/projections/identity"
	"github.com/arr-dev/arr/readapi/metering"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// quotas is the rate limiting and metering of the HTTP roles: the quota
// middlewares' limiter (PostgreSQL, or Redis with REDIS_URL), the cleanup
// of ended PostgreSQL windows and the usage meter.
type quotas struct {
	quota   *ratelimit.Quota
	meter   *metering.Meter
	cleanup func(context.Context) error // nil with Redis, whose keys expire
	close   func()
}

func openQuotas(ctx context.Context, cfg Config, s *system, log *slog.Logger, now func() time.Time) (*quotas, error) {
	q := &quotas{close: func() {}}
	var limiter ratelimit.BatchLimiter
	qcfg := ratelimit.Config{PublicPerHour: int64(cfg.PublicLimit), Now: now, Logger: log}
	if cfg.RedisURL != "" {
		r, client, err := ratelimit.OpenRedis(ctx, cfg.RedisURL, ratelimit.RedisConfig{Now: now})
		if err != nil {
			return nil, err
		}
		q.close = func() { _ = client.Close() }
		limiter = r
		log.Info("quota counters in Redis", "addr", client.Options().Addr)
	} else {
		p, err := ratelimit.NewPostgres(s.admission, ratelimit.PostgresConfig{Now: now, Logger: log})
		if err != nil {
			return nil, err
		}
		limiter, q.cleanup = p, p.Run
		qcfg.Postgres = p // a gateway request is counted in its key's look-up
		if s.guard != nil {
			// A limited gateway key's plan count goes with its
			// reservation: one round trip for the key, its limits and
			// its quota (ratelimit.Deferred).
			qcfg.Defer = deferToReservation
		}
	}
	// Concurrent requests of one bucket share a counting round trip.
	coalesced, err := ratelimit.Coalesce(limiter, ratelimit.CoalesceConfig{})
	if err != nil {
		q.close()
		return nil, err
	}
	if q.quota, err = ratelimit.New(coalesced, qcfg); err != nil {
		q.close()
		return nil, err
	}
	if q.meter, err = metering.New(s.app.Commands.CountCalls, metering.Config{Now: now, Logger: log}); err != nil {
		q.close()
		return nil, err
	}
	return q, nil
}

// deferToReservation leaves the plan count of a gateway request to the
// key's reservation (commands/spend) when the key has limits that reserve.
func deferToReservation(ctx context.Context, p identity.Principal, d *ratelimit.Deferred) (context.Context, bool) {
	if !spend.Reserves(p.Limits, p.AccountBudget) {
		return ctx, false
	}
	return spend.WithPlanQuota(ctx, d), true
}
