// Package audit holds the gateway's audit chain: the CompletionRecorded
// event every completion appends, its payload, and the hash rules that link
// the events into one verifiable chain. New entries (link 2) use
//
//	hash = SHA-256(previous hash ‖ SHA-256(canonical payload))
//
// so that anyone holding an entry's public view (hash, prev_hash and the
// payload's digest) can check its link without seeing the payload; entries
// recorded before (link 1, schema version 1) use
//
//	hash = SHA-256(previous hash ‖ canonical payload)
//
// and both verify. Hashes are 32 raw bytes (32 zero bytes before the first
// entry) and the canonical payload is the payload's compact JSON exactly as
// stored in the event. Any change of a stored payload, hash or link is
// found by Verify.
//
// The package also holds who may read what of an entry (Audience: the
// public sees the chain, the owning account and the operator's auditor the
// payload too) and the keyed hash (HashKey, HMAC-SHA-256) of the request
// and reply bodies that payloads carry, so a guessed prompt cannot be
// confirmed.
//
// Values are plain data, safe to share once built.
package audit
