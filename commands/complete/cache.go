package complete

import (
	"container/list"
	"sync"
	"time"
)

// CacheConfig configures the exact-match response cache.
type CacheConfig struct {
	// MaxEntries bounds the cache; the least recently used entry goes
	// first. Default 10000; negative turns the cache off.
	MaxEntries int
	// TTL is how long an entry is served. Default 1h.
	TTL time.Duration
}

// cached is one stored reply: the upstream's non-streamed body (for a
// stream, assembled from its chunks) and who answered.
type cached struct {
	body   []byte
	model  string
	tier   string
	usage  Usage
	stored time.Time
}

// cache is an LRU of replies with a TTL, keyed by Request.CacheKey.
// Safe for concurrent use.
type cache struct {
	cfg       CacheConfig
	mu        sync.Mutex
	ll        *list.List
	items     map[string]*list.Element
	hits      int64
	miss      int64
	coalesced int64
}

type cacheItem struct {
	key string
	val cached
}

func newCache(cfg CacheConfig) *cache {
	if cfg.MaxEntries == 0 {
		cfg.MaxEntries = 10000
	}
	if cfg.TTL <= 0 {
		cfg.TTL = time.Hour
	}
	return &cache{cfg: cfg, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *cache) enabled() bool { return c != nil && c.cfg.MaxEntries > 0 }

// get returns the reply stored under key and counts a hit. A miss is
// not counted here: the caller counts it (missed) when it calls the
// upstream, or a hit (shared) when another request's call answers it.
func (c *cache) get(key string, now time.Time) (cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok || now.Sub(el.Value.(*cacheItem).val.stored) > c.cfg.TTL {
		if ok {
			c.ll.Remove(el)
			delete(c.items, key)
		}
		return cached{}, false
	}
	c.ll.MoveToFront(el)
	c.hits++
	return el.Value.(*cacheItem).val, true
}

// missed counts a cacheable request that called the upstream.
func (c *cache) missed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.miss++
}

// shared counts a request answered by another's upstream call (single
// flight): a hit.
func (c *cache) shared() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hits++
	c.coalesced++
}

func (c *cache) put(key string, v cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		el.Value.(*cacheItem).val = v
		c.ll.MoveToFront(el)
		return
	}
	c.items[key] = c.ll.PushFront(&cacheItem{key: key, val: v})
	for c.ll.Len() > c.cfg.MaxEntries {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.items, last.Value.(*cacheItem).key)
	}
}

// CacheStats is the cache's part of /healthz.
type CacheStats struct {
	Status     string  `json:"status"` // "ok" or "disabled"
	Entries    int     `json:"entries"`
	MaxEntries int     `json:"max_entries"`
	TTLSeconds float64 `json:"ttl_seconds"`
	Hits       int64   `json:"hits"`
	Misses     int64   `json:"misses"`
	// Coalesced counts the hits that joined another request's upstream
	// call while it was in flight.
	Coalesced int64 `json:"coalesced"`
}

func (c *cache) stats() CacheStats {
	if !c.enabled() {
		return CacheStats{Status: "disabled"}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Status: "ok", Entries: c.ll.Len(), MaxEntries: c.cfg.MaxEntries, TTLSeconds: c.cfg.TTL.Seconds(), Hits: c.hits, Misses: c.miss, Coalesced: c.coalesced}
}
