package tilecache_test

import (
	"bytes"
	"testing"

	"github.com/arr-dev/arr/readapi/recordsapi/tilecache"
)

func key(x int, pos int64) tilecache.Key {
	return tilecache.Key{Z: 14, X: x, Y: 1, Weights: "2026-02", Day: "2026-06-01", Position: pos}
}

// TestNewerPositionDropsOlderTiles: once a newer position is seen, no
// tile of an older one is served, and one made at an older position
// (a request that raced a load) is not held.
func TestNewerPositionDropsOlderTiles(t *testing.T) {
	c := tilecache.New(1 << 20)
	c.Put(key(1, 5), []byte("old"))
	if got, ok := c.Get(key(1, 5)); !ok || string(got) != "old" {
		t.Fatalf("Get after Put = %q, %v", got, ok)
	}
	c.Seen(6)
	if _, ok := c.Get(key(1, 5)); ok {
		t.Fatal("a tile of position 5 is served after position 6 was seen")
	}
	if st := c.Stats(); st.Tiles != 0 || st.Bytes != 0 {
		t.Fatalf("after position 6: %+v, want nothing held", st)
	}
	c.Put(key(2, 5), []byte("late"))
	if _, ok := c.Get(key(2, 5)); ok {
		t.Fatal("a tile made at position 5 is held after position 6 was seen")
	}
	// An empty tile (nil) is cached like any other.
	c.Put(key(3, 6), nil)
	if got, ok := c.Get(key(3, 6)); !ok || got != nil {
		t.Fatalf("empty tile: %v, %v", got, ok)
	}
	st := c.Stats()
	if st.Hits != 2 || st.Misses != 2 {
		t.Fatalf("stats %+v, want 2 hits and 2 misses", st)
	}
}

// TestBoundedByBytes: the cache never holds more than its size; the least
// recently used tiles go first, and a tile larger than the whole cache is
// never held.
func TestBoundedByBytes(t *testing.T) {
	const tile = 1000
	c := tilecache.New(3*tile + 3*128)
	for x := range 3 {
		c.Put(key(x, 1), bytes.Repeat([]byte{1}, tile))
	}
	c.Get(key(0, 1)) // 0 is now the most recently used; 1 the least
	c.Put(key(3, 1), bytes.Repeat([]byte{1}, tile))
	if _, ok := c.Get(key(1, 1)); ok {
		t.Error("the least recently used tile is still held past the size")
	}
	for _, x := range []int{0, 2, 3} {
		if _, ok := c.Get(key(x, 1)); !ok {
			t.Errorf("tile %d was dropped", x)
		}
	}
	if st := c.Stats(); st.Bytes > 3*tile+3*128 || st.Tiles != 3 {
		t.Errorf("stats %+v: past the size", st)
	}
	c.Put(key(9, 1), bytes.Repeat([]byte{1}, 4*tile))
	if _, ok := c.Get(key(9, 1)); ok {
		t.Error("a tile larger than the cache is held")
	}
	if st := c.Stats(); st.Tiles != 3 {
		t.Errorf("a too-large tile dropped others: %+v", st)
	}
}
