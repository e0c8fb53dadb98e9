// Package tilecache holds the records service's in-process cache of
// vector tiles: least recently used tiles are dropped once the tiles held
// pass a size in bytes, and every tile is filed under the read model's
// position it was made at, so a tile of an older position is never
// served once a newer one has been seen.
package tilecache
