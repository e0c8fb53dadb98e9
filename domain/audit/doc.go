// Package audit holds the gateway's audit chain: the CompletionRecorded
// event every completion appends, its payload, and the hash rule that links
// the events into one verifiable chain:
//
//	hash = SHA-256(previous hash ‖ canonical payload)
//
// where the previous hash is 32 raw bytes (32 zero bytes for the first
// entry) and the canonical payload is the payload's compact JSON exactly as
// stored in the event. Any change of a stored payload, hash or link is
// found by Verify.
//
// Values are plain data, safe to share once built.
package audit
