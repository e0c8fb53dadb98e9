package tilecache

import (
	"container/list"
	"sync"
	"sync/atomic"
)

// Key names one tile: its coordinates, its layers filter (sorted,
// comma-separated), the weights version and the day (YYYY-MM-DD) its
// scores are as of, and the read model's position it was made at.
type Key struct {
	Z, X, Y  int
	Layers   string
	Weights  string
	Day      string
	Position int64
}

// entryOverhead is what an entry costs beside its tile's bytes (the key,
// the list element, the map slot), counted against the size bound.
const entryOverhead = 128

type entry struct {
	key  Key
	tile []byte
}

// Cache is a size-bounded LRU of tiles, safe for concurrent use. A nil
// tile (an empty tile, answered 204) is cached like any other.
type Cache struct {
	maxBytes int64

	mu       sync.Mutex
	bytes    int64
	position int64
	order    *list.List // front: most recently used
	byKey    map[Key]*list.Element

	hits, misses atomic.Int64
}

// New returns a cache holding at most maxBytes of tiles (and their
// overhead); a tile larger than that is never held.
func New(maxBytes int64) *Cache {
	return &Cache{maxBytes: maxBytes, order: list.New(), byKey: map[Key]*list.Element{}}
}

// Get returns the tile filed under k, counting a hit or a miss.
func (c *Cache) Get(k Key) (tile []byte, ok bool) {
	c.mu.Lock()
	el, ok := c.byKey[k]
	if ok {
		c.order.MoveToFront(el)
		tile = el.Value.(*entry).tile
	}
	c.mu.Unlock()
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return tile, ok
}

// Seen tells the cache the read model is at position pos: when pos is
// newer than any position seen before, every tile of an older one is
// dropped (none could be asked for again).
func (c *Cache) Seen(pos int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen(pos)
}

func (c *Cache) seen(pos int64) {
	if pos <= c.position {
		return
	}
	c.position = pos
	for k, el := range c.byKey {
		if k.Position < pos {
			c.remove(el)
		}
	}
}

// Put files tile under k, dropping the least recently used tiles while
// the cache holds more than its size. A tile of a position older than
// the newest seen is not held.
func (c *Cache) Put(k Key, tile []byte) {
	size := int64(len(tile)) + entryOverhead
	if size > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen(k.Position)
	if k.Position < c.position {
		return
	}
	if el, ok := c.byKey[k]; ok {
		c.remove(el)
	}
	c.byKey[k] = c.order.PushFront(&entry{key: k, tile: tile})
	c.bytes += size
	for c.bytes > c.maxBytes {
		c.remove(c.order.Back())
	}
}

func (c *Cache) remove(el *list.Element) {
	e := c.order.Remove(el).(*entry)
	delete(c.byKey, e.key)
	c.bytes -= int64(len(e.tile)) + entryOverhead
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
