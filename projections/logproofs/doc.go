// Package logproofs is the query side of the event log's Merkle tree: the
// signed tree heads the projections role keeps and the inclusion and
// consistency proofs computed from the tree nodes the store keeps
// (eventstore/signedlog), in the shapes the public /v1/log routes serve.
// Heads and proofs carry hashes, never an event's content.
package logproofs
