// Package tilecache holds the records service's in-process cache of
// vector tiles: least recently used tiles are dropped once the tiles
// held, counted at what they really cost in memory (cost.go), pass a size
// in bytes; and the cache holds the tiles of one read-model version at a
// time, so a tile of another version (older, newer, or of a rebuilt read
// model at the same position) is never served once a request has seen
// the version move.
package tilecache
