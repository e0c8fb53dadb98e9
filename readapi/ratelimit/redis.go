package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisConfig configures the Redis limiter.
type RedisConfig struct {
	// Prefix starts every key arr writes. Default "arr:quota:".
	Prefix string
	// Keep is how long after its window ends a counter expires. Default 1m.
	Keep time.Duration
	// Now is the clock the expiry is computed with. Default time.Now.
	Now func() time.Time
}

// Validate fills in defaults and checks the values.
func (c *RedisConfig) Validate() error {
	if c.Prefix == "" {
		c.Prefix = "arr:quota:"
	}
	if c.Keep == 0 {
		c.Keep = time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Keep < 0 {
		return errors.New("ratelimit: Keep must be positive")
	}
	return nil
}

// newTakeScript returns the script that checks and increments one counter atomically (a Lua script
// runs alone on the server) and sets its expiry when it creates it.
// KEYS[1] counter; ARGV[1] limit; ARGV[2] time to live in ms.
// Returns {admitted (0/1), count}.
func newTakeScript() *redis.Script {
	return redis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return {0, n} end
n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, n}
`)
}

// Redis is the Limiter used when REDIS_URL is set: one counter key per
// bucket and window, checked and incremented by one Lua script, expiring
// Keep after its window. Safe for concurrent use.
type Redis struct {
	client redis.UniversalClient
	script *redis.Script
	cfg    RedisConfig
}

// NewRedis returns a limiter on client.
func NewRedis(client redis.UniversalClient, cfg RedisConfig) (*Redis, error) {
	if client == nil {
		return nil, errors.New("ratelimit: nil redis client")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Redis{client: client, script: newTakeScript(), cfg: cfg}, nil
}

// OpenRedis connects to the Redis at url (redis://[user:pass@]host:port/db
// or rediss:// for TLS), checks that it answers and loads the script. The
// caller closes the returned client.
func OpenRedis(ctx context.Context, url string, cfg RedisConfig) (*Redis, *redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	c := redis.NewClient(opts)
	r, err := NewRedis(c, cfg)
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	if err := r.script.Load(ctx, c).Err(); err != nil {
		_ = c.Close()
		return nil, nil, fmt.Errorf("connecting to Redis at %s: %w", opts.Addr, err)
	}
	return r, c, nil
}

// Take implements Limiter.
func (r *Redis) Take(ctx context.Context, bucket string, w Window, limit int64) (Result, error) {
	if limit < 1 {
		return denied(w, limit), nil
	}
	ttl := w.End.Sub(r.cfg.Now()) + r.cfg.Keep
	if ttl < time.Millisecond {
		ttl = time.Millisecond
	}
	key := r.cfg.Prefix + bucket + ":" + unixString(w.Start)
	v, err := r.script.Run(ctx, r.client, []string{key}, limit, strconv.FormatInt(ttl.Milliseconds(), 10)).Int64Slice()
	if err != nil {
		return Result{}, fmt.Errorf("counting %s: %w", bucket, err)
	}
	if len(v) != 2 {
		return Result{}, fmt.Errorf("counting %s: unexpected script reply %v", bucket, v)
	}
	if v[0] == 0 {
		return denied(w, limit), nil
	}
	return admitted(w, limit, v[1]), nil
}
