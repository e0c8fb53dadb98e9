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

// newTakeNScript returns the script that admits up to ARGV[3] requests at
// once. KEYS[1] counter; ARGV[1] limit; ARGV[2] time to live in ms; ARGV[3]
// requests. Returns {admitted, count}.
func newTakeNScript() *redis.Script {
	return redis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local k = math.min(tonumber(ARGV[3]), tonumber(ARGV[1]) - n)
if k <= 0 then return {0, n} end
local c = redis.call('INCRBY', KEYS[1], k)
if c == k then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {k, c}
`)
}

// newGiveScript returns the script that gives one request back: it
// decrements the counter KEYS[1] if it is above zero. Returns the count.
func newGiveScript() *redis.Script {
	return redis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n <= 0 then return 0 end
return redis.call('DECR', KEYS[1])
`)
}

// Redis is the Limiter used when REDIS_URL is set: one counter key per
// bucket and window, checked and incremented by one Lua script, expiring
// Keep after its window. Safe for concurrent use.
type Redis struct {
	client redis.UniversalClient
	script *redis.Script
	takeN  *redis.Script
	give   *redis.Script
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
	return &Redis{client: client, script: newTakeScript(), takeN: newTakeNScript(), give: newGiveScript(), cfg: cfg}, nil
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
	err = r.script.Load(ctx, c).Err()
	if err == nil {
		err = r.takeN.Load(ctx, c).Err()
	}
	if err != nil {
		_ = c.Close()
		return nil, nil, fmt.Errorf("connecting to Redis at %s: %w", opts.Addr, err)
	}
	return r, c, nil
}

// key is the counter of bucket's window w, and ttl its time to live.
func (r *Redis) key(bucket string, w Window) (key, ttl string) {
	d := w.End.Sub(r.cfg.Now()) + r.cfg.Keep
	if d < time.Millisecond {
		d = time.Millisecond
	}
	return r.cfg.Prefix + bucket + ":" + unixString(w.Start), strconv.FormatInt(d.Milliseconds(), 10)
}

// TakeMany implements BatchLimiter: one script run per ask, pipelined in
// one round trip; each run is atomic on the server.
func (r *Redis) TakeMany(ctx context.Context, asks []Ask) ([]Granted, error) {
	out := make([]Granted, len(asks))
	pipe := r.client.Pipeline()
	cmds := make([]*redis.Cmd, len(asks))
	keys := make([]string, len(asks))
	ttls := make([]string, len(asks))
	for i, a := range asks {
		if a.Limit < 1 || a.N < 1 {
			continue
		}
		keys[i], ttls[i] = r.key(a.Bucket, a.Window)
		cmds[i] = r.takeN.EvalSha(ctx, pipe, []string{keys[i]}, a.Limit, ttls[i], a.N)
	}
	if _, err := pipe.Exec(ctx); err != nil && !redis.HasErrorPrefix(err, "NOSCRIPT") {
		return nil, fmt.Errorf("counting the requests of %d buckets: %w", len(asks), err)
	}
	for i, cmd := range cmds {
		if cmd == nil {
			continue
		}
		v, err := cmd.Int64Slice()
		if redis.HasErrorPrefix(err, "NOSCRIPT") {
			// The server lost the script (a restart): Run sends it again.
			a := asks[i]
			v, err = r.takeN.Run(ctx, r.client, []string{keys[i]}, a.Limit, ttls[i], a.N).Int64Slice()
		}
		if err != nil {
			return nil, fmt.Errorf("counting %s: %w", asks[i].Bucket, err)
		}
		if len(v) != 2 {
			return nil, fmt.Errorf("counting %s: unexpected script reply %v", asks[i].Bucket, v)
		}
		out[i] = Granted{Admitted: v[0], Count: v[1]}
	}
	return out, nil
}

// Take implements Limiter.
func (r *Redis) Take(ctx context.Context, bucket string, w Window, limit int64) (Result, error) {
	if limit < 1 {
		return denied(w, limit), nil
	}
	key, ttl := r.key(bucket, w)
	v, err := r.script.Run(ctx, r.client, []string{key}, limit, ttl).Int64Slice()
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

// Give implements Limiter with one script run.
func (r *Redis) Give(ctx context.Context, bucket string, w Window) error {
	key, _ := r.key(bucket, w)
	if err := r.give.Run(ctx, r.client, []string{key}).Err(); err != nil {
		return fmt.Errorf("giving back a request of %s: %w", bucket, err)
	}
	return nil
}
