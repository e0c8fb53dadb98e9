package identity

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/wait"
)

// Channel is the PostgreSQL notification channel on which every
// committed batch of the identity read model is announced, so processes
// that cache principals drop them.
const Channel = "arr_identity"

// keyCache remembers the principals of valid keys, by secret hash, so a
// keyed request does not cost a database round trip. It serves entries only
// while its process listens on Channel: every identity batch
// (revocations, plan changes, …) clears it on commit, and so does a lost
// listener connection. Only valid keys are cached, so a newly minted key is
// looked up (and authenticates) at once.
type keyCache struct {
	mu   sync.RWMutex
	live bool
	gen  uint64
	m    map[string]cachedPrincipal
	ttl  time.Duration
	max  int
}

type cachedPrincipal struct {
	p  Principal
	at time.Time
}

func newKeyCache() *keyCache {
	return &keyCache{m: map[string]cachedPrincipal{}, ttl: time.Minute, max: 100_000}
}

// get returns a cached principal and the generation to pass to put after a
// miss.
func (c *keyCache) get(hash string, svc account.Service, now time.Time) (Principal, bool, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.live {
		return Principal{}, false, c.gen
	}
	e, ok := c.m[hash]
	if !ok || e.p.Service != svc || now.Sub(e.at) > c.ttl {
		return Principal{}, false, c.gen
	}
	return e.p, true, c.gen
}

// put caches p if nothing was invalidated since gen was read (the lookup
// may have read a row a concurrent revocation has since changed).
func (c *keyCache) put(hash string, p Principal, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || c.gen != gen {
		return
	}
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[hash] = cachedPrincipal{p: p, at: now}
}

// forget drops every entry; live says whether entries may be cached after.
func (c *keyCache) forget(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.live = live
	clear(c.m)
}

// listen keeps a LISTEN connection on Channel until ctx ends,
// clearing the cache on every notification and serving no cached entry
// while it is not listening.
func (c *keyCache) listen(ctx context.Context, pool *pgxpool.Pool, warn func(msg string, args ...any)) {
	defer c.forget(false)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			if ctx.Err() == nil {
				warn("key cache listener: acquiring a connection; keys are looked up per request meanwhile", "err", err)
			}
			wait.Sleep(ctx, backoff)
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
			_ = conn.Conn().Close(context.Background())
			conn.Release()
			if ctx.Err() == nil {
				warn("key cache listener: LISTEN; keys are looked up per request meanwhile", "err", err)
			}
			wait.Sleep(ctx, backoff)
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		c.forget(true) // anything may have changed while nobody listened
		for {
			if _, err := conn.Conn().WaitForNotification(ctx); err != nil {
				break
			}
			c.forget(true)
		}
		c.forget(false)
		// Connection state (LISTEN) must not go back to the pool.
		_ = conn.Conn().Close(context.Background())
		conn.Release()
	}
}

// invalidate drops every entry and keeps caching as it was.
func (c *keyCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.m)
}
