// Package signedlog is arr's event log as auditors see it: tree heads
// signed with the log's Ed25519 key and kept (Signer), the inclusion and
// consistency proofs served against them (Prover), and Verify, which walks
// the log's events, recomputes every leaf and the tree, and names the first
// event that no longer matches what was appended or signed.
//
// It works on an eventstore.MerkleLog (the PostgreSQL store) through small
// interfaces declared beside their users; the tree, the proofs and the
// signatures are those of package transparency, checked by package
// verifier. docs/transparency.md describes every byte.
package signedlog
