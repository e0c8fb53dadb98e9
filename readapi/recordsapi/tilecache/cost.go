package tilecache

// entryOverhead is what an entry costs in memory beside the bytes of its
// key's strings, its ETag and its tile: the entry itself (its key, the
// tile's slice header, the ETag's string header, the two links of the
// recency list: 144 bytes, in the 144-byte size class), its map slot
// (the key and the pointer, with the control byte, at the map's load
// between growths: about 130 bytes) and the size-class rounding of its
// three or four small strings (up to 15 bytes each). Measured by
// TestAttackEmptyTilesBound (cost_test.go), which fills a cache with
// empty tiles and compares the heap it grew by with the bytes counted:
// the count must not be below what the heap holds, so that the bound
// holds for tiles of no bytes at all (an empty tile is answered 204 and
// costs its entry alone).
const entryOverhead = 414

// cost is what the entry of k, with etag and tile, costs in memory.
func cost(k Key, etag string, tile []byte) int64 {
	return entryOverhead + int64(len(k.Layers)+len(k.Weights)+len(k.Day)+len(etag)+len(tile))
}
