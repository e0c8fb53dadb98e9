package tilecache

import (
	"sync"
	"sync/atomic"

	"github.com/arr-dev/arr/projections/parcels"
)

// Key names one tile of a version: its coordinates, its layers filter
// (sorted, comma-separated), and what its bytes depend on beside them:
// the weights version and the day (YYYY-MM-DD) its scores are as of,
// both empty for a tile of clusters past its cap (parcels.TileResult:
// it holds no score).
type Key struct {
	Z, X, Y int
	Layers  string
	Weights string
	Day     string
}

// Tile is a cached tile: its bytes (nil for an empty tile) and its ETag.
type Tile struct {
	Bytes []byte
	ETag  string
}

// entry is one tile held, linked in the recency list (newer toward head).
type entry struct {
	key        Key
	tile       Tile
	prev, next *entry
}

// Cache is a size-bounded LRU of the tiles of one read-model version,
// safe for concurrent use. An empty tile is cached like any other, and
// counted at its entry's cost.
type Cache struct {
	maxBytes int64

	mu      sync.Mutex
	version parcels.ReadModelVersion
	bytes   int64
	byKey   map[Key]*entry
	head    *entry // most recently used
	tail    *entry // least recently used

	hits, misses atomic.Int64
}

// New returns a cache holding at most maxBytes of tiles, counted with
// their overhead (cost.go); a tile larger than that is never held.
func New(maxBytes int64) *Cache {
	return &Cache{maxBytes: maxBytes, byKey: map[Key]*entry{}}
}

// Seen tells the cache the read model is at version v: when v is another
// version than the one it holds (newer, or older: a position that went
// back, or a rebuilt schema), every tile is dropped at once, by swapping
// the map for an empty one. Two requests that read the version either
// side of a load's end can drop the tiles twice; neither is served a
// tile of a version it did not read.
func (c *Cache) Seen(v parcels.ReadModelVersion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v == c.version {
		return
	}
	c.version, c.bytes, c.head, c.tail = v, 0, nil, nil
	c.byKey = map[Key]*entry{}
}

// Get returns the tile filed under the first of keys that is held, when
// the cache holds version v, counting one hit or one miss.
func (c *Cache) Get(v parcels.ReadModelVersion, keys ...Key) (Tile, bool) {
	c.mu.Lock()
	var e *entry
	if v == c.version {
		for _, k := range keys {
			if e = c.byKey[k]; e != nil {
				c.unlink(e)
				c.pushFront(e)
				break
			}
		}
	}
	c.mu.Unlock()
	if e == nil {
		c.misses.Add(1)
		return Tile{}, false
	}
	c.hits.Add(1)
	return e.tile, true
}

// Put files t under k when the cache holds version v (a tile made at
// another version is not held), dropping the least recently used tiles
// while the cache holds more than its size.
func (c *Cache) Put(v parcels.ReadModelVersion, k Key, t Tile) {
	size := cost(k, t.ETag, t.Bytes)
	if size > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v != c.version {
		return
	}
	if old := c.byKey[k]; old != nil {
		c.remove(old)
	}
	e := &entry{key: k, tile: t}
	c.byKey[k] = e
	c.pushFront(e)
	c.bytes += size
	for c.bytes > c.maxBytes {
		c.remove(c.tail)
	}
}

func (c *Cache) pushFront(e *entry) {
	e.prev, e.next = nil, c.head
	if c.head != nil {
		c.head.prev = e
	}
	c.head = e
	if c.tail == nil {
		c.tail = e
	}
}

func (c *Cache) unlink(e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		c.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		c.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

func (c *Cache) remove(e *entry) {
	c.unlink(e)
	delete(c.byKey, e.key)
	c.bytes -= cost(e.key, e.tile.ETag, e.tile.Bytes)
}

// Stats are a cache's figures.
type Stats struct {
	Tiles        int
	Bytes        int64
	Hits, Misses int64
}

// Stats returns the cache's figures now.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Tiles: len(c.byKey), Bytes: c.bytes, Hits: c.hits.Load(), Misses: c.misses.Load()}
}
