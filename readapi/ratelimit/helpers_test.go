package ratelimit_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/migrations/migratetest"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// backend is one Limiter implementation under test, on a real server.
type backend struct {
	name string
	new  func(t testing.TB, now func() time.Time) ratelimit.Limiter
}

func backends() []backend {
	return []backend{
		{"postgres", func(t testing.TB, now func() time.Time) ratelimit.Limiter { return newPostgres(t, now) }},
		{"redis", newRedis},
		{"postgres coalesced", func(t testing.TB, now func() time.Time) ratelimit.Limiter { return coalesced(t, newPostgres(t, now)) }},
		{"redis coalesced", func(t testing.TB, now func() time.Time) ratelimit.Limiter {
			return coalesced(t, newRedis(t, now).(ratelimit.BatchLimiter))
		}},
	}
}

func coalesced(t testing.TB, l ratelimit.BatchLimiter) *ratelimit.Coalescing {
	t.Helper()
	c, err := ratelimit.Coalesce(l, ratelimit.CoalesceConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newPostgres(t testing.TB, now func() time.Time) *ratelimit.Postgres {
	t.Helper()
	l, _ := newPostgresPool(t, now)
	return l
}

// newPostgresPool is newPostgres that also returns the pool, in its own
// migrated database.
func newPostgresPool(t testing.TB, now func() time.Time) (*ratelimit.Postgres, *pgxpool.Pool) {
	t.Helper()
	pool, _ := migratetest.NewPool(t)
	l, err := ratelimit.NewPostgres(pool, ratelimit.PostgresConfig{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return l, pool
}

// redisURL is REDIS_URL, else the local server scripts/test.sh starts.
func redisURL() string {
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// newRedis returns a Redis limiter whose keys carry a prefix of their own,
// so tests share one server without sharing counters.
func newRedis(t testing.TB, now func() time.Time) ratelimit.Limiter {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs Redis; runs without -short (scripts/test.sh)")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	prefix := "arr-test:" + hex.EncodeToString(b) + ":"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, client, err := ratelimit.OpenRedis(ctx, redisURL(), ratelimit.RedisConfig{Prefix: prefix, Now: now})
	if err != nil {
		t.Fatalf("Redis is not reachable at %s (%v): start it with scripts/test.sh (redis-server on 127.0.0.1:6379), or set REDIS_URL", redisURL(), err)
	}
	t.Cleanup(func() {
		keys, _ := client.Keys(context.Background(), prefix+"*").Result()
		if len(keys) > 0 {
			client.Del(context.Background(), keys...)
		}
		_ = client.Close()
	})
	return l
}

// clock is a settable clock for window tests.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }
