package tilecache_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/arr-dev/arr/projections/parcels"
	"github.com/arr-dev/arr/readapi/recordsapi/tilecache"
)

// TestAttackEmptyTilesBound: a client asking for tile after empty tile
// (204s: no bytes, so only the entry's overhead counts) fills the cache
// with entries of no tile at all. The heap the cache grows by must stay
// within the bytes it counts against its bound, filled once and after
// churning through twice as many tiles again: the bound is on memory,
// not only on tile bytes. Every key's strings and ETag are allocated
// afresh, as a request's are.
func TestAttackEmptyTilesBound(t *testing.T) {
	const bound = 32 << 20
	v := parcels.ReadModelVersion{Schema: 16384, Position: 123456}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	c := tilecache.New(bound)
	c.Seen(v)
	put := func(i int) {
		k := tilecache.Key{Z: 14, X: i % 16384, Y: i / 16384, Layers: strings.Clone("tax_sale"), Weights: strings.Clone("2026-02"),
			Day: fmt.Sprintf("2026-06-%02d", 1+i%28)}
		c.Put(v, k, tilecache.Tile{ETag: fmt.Sprintf(`"16384.123456-%024x"`, i)})
	}
	n := 0
	for ; c.Stats().Tiles == n; n++ {
		put(n) // until the first is dropped: the cache is full
	}
	for _, phase := range []string{"filled", "churned"} {
		if phase == "churned" {
			for i := range 2 * n {
				put(n + i)
			}
		}
		grew := int64(heap()) - int64(before)
		st := c.Stats()
		ratio := float64(grew) / float64(st.Bytes)
		t.Logf("%s: %d empty tiles, %d bytes counted (bound %d), heap grew %d bytes: heap / counted %.2f", phase, st.Tiles, st.Bytes, bound, grew, ratio)
		if st.Bytes > bound {
			t.Errorf("%s: %d bytes counted past the bound %d", phase, st.Bytes, bound)
		}
		if ratio > 1 {
			t.Errorf("%s: the heap holds %.2f times the bytes counted: empty tiles pass the bound", phase, ratio)
		}
	}
	runtime.KeepAlive(c)
}
