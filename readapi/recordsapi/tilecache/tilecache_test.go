package tilecache_test

import (
	"bytes"
	"testing"

	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/readapi/recordsapi/tilecache"
)

func key(x int) tilecache.Key {
	return tilecache.Key{Z: 14, X: x, Y: 1, Weights: "2026-02", Day: "2026-06-01"}
}

func version(schema uint32, pos int64) parcels.ReadModelVersion {
	return parcels.ReadModelVersion{Schema: schema, Position: pos}
}

// TestVersionChangeDropsEveryTile: once another version is seen (newer,
// a position gone back, or a rebuilt schema at the same position), no
// tile of the one before is served, and a tile made at a version the
// cache does not hold (a request that raced a load) is not held.
func TestVersionChangeDropsEveryTile(t *testing.T) {
	tests := []struct {
		name string
		next parcels.ReadModelVersion
	}{
		{name: "newer position", next: version(1, 6)},
		{name: "position gone back", next: version(1, 4)},
		{name: "rebuilt schema, same position", next: version(2, 5)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tilecache.New(1 << 20)
			old := version(1, 5)
			c.Seen(old)
			c.Put(old, key(1), tilecache.Tile{Bytes: []byte("old"), ETag: `"a"`})
			if got, ok := c.Get(old, key(1)); !ok || string(got.Bytes) != "old" || got.ETag != `"a"` {
				t.Fatalf("Get after Put = %+v, %v", got, ok)
			}
			c.Seen(tc.next)
			if _, ok := c.Get(old, key(1)); ok {
				t.Fatal("a tile of the old version is served after another was seen")
			}
			if _, ok := c.Get(tc.next, key(1)); ok {
				t.Fatal("a tile of the old version is served under the new one")
			}
			if st := c.Stats(); st.Tiles != 0 || st.Bytes != 0 {
				t.Fatalf("after the new version: %+v, want nothing held", st)
			}
			c.Put(old, key(2), tilecache.Tile{Bytes: []byte("late")})
			if _, ok := c.Get(old, key(2)); ok {
				t.Fatal("a tile made at the old version is held after the new one was seen")
			}
			// An empty tile (nil) is cached like any other.
			c.Put(tc.next, key(3), tilecache.Tile{ETag: `"e"`})
			if got, ok := c.Get(tc.next, key(9), key(3)); !ok || got.Bytes != nil || got.ETag != `"e"` {
				t.Fatalf("empty tile, found by its second key: %+v, %v", got, ok)
			}
			if st := c.Stats(); st.Hits != 2 || st.Misses != 3 {
				t.Fatalf("stats %+v, want 2 hits and 3 misses", st)
			}
		})
	}
}

// TestBoundedByBytes: the cache never holds more than its size; the least
// recently used tiles go first, and a tile larger than the whole cache is
// never held.
func TestBoundedByBytes(t *testing.T) {
	const tile = 1000
	one := tilecache.New(1 << 20)
	one.Put(parcels.ReadModelVersion{}, key(0), tilecache.Tile{Bytes: bytes.Repeat([]byte{1}, tile)})
	per := one.Stats().Bytes
	c := tilecache.New(3 * per)
	v := parcels.ReadModelVersion{}
	for x := range 3 {
		c.Put(v, key(x), tilecache.Tile{Bytes: bytes.Repeat([]byte{1}, tile)})
	}
	c.Get(v, key(0)) // 0 is now the most recently used; 1 the least
	c.Put(v, key(3), tilecache.Tile{Bytes: bytes.Repeat([]byte{1}, tile)})
	if _, ok := c.Get(v, key(1)); ok {
		t.Error("the least recently used tile is still held past the size")
	}
	for _, x := range []int{0, 2, 3} {
		if _, ok := c.Get(v, key(x)); !ok {
			t.Errorf("tile %d was dropped", x)
		}
	}
	if st := c.Stats(); st.Bytes > 3*per || st.Tiles != 3 {
		t.Errorf("stats %+v: past the size", st)
	}
	c.Put(v, key(9), tilecache.Tile{Bytes: bytes.Repeat([]byte{1}, 4*tile)})
	if _, ok := c.Get(v, key(9)); ok {
		t.Error("a tile larger than the cache is held")
	}
	if st := c.Stats(); st.Tiles != 3 {
		t.Errorf("a too-large tile dropped others: %+v", st)
	}
}
