// Package routing holds the gateway's pure routing rules: the model catalog
// (tiers of upstream models with prices, quality and context windows), the
// difficulty score of a chat request, the quality predicted for each tier
// at that difficulty (corrected by feedback), and the choice of tier and
// failover order under a quality floor and a hard cost ceiling.
//
// Nothing here does I/O. Values are plain data, safe for concurrent reads
// once built.
package routing
