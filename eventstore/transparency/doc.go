// Package transparency is the prover side of arr's tamper-evident event
// log: an RFC 6962 Merkle tree over the events' leaf hashes, the inclusion
// and consistency proofs auditors check with package verifier, and the
// signing of tree heads. It holds no database code; a store of tree nodes
// plugs in through NodeReader.
//
// # Nodes
//
// A node is the root of a perfect subtree, named by its level (0 for a
// leaf, h for a subtree of 2^h leaves) and its index among the nodes of its
// level: node (h, i) covers leaves i*2^h to (i+1)*2^h - 1. A node never
// changes once its last leaf is appended, so a store keeps every node ever
// completed, appended in order at each level: Tree.Append names the nodes
// a new leaf completes (on average two: the leaf itself and one interior
// node), and a store inserts exactly those. The hash of any range that is
// not a perfect subtree (the root of a tree whose size is not a power of
// two, the right-hand siblings in proofs) is computed from the O(log n)
// perfect nodes that cover it, so nothing else is ever stored.
//
// # Tree
//
// Tree is the compact range of the whole log: the roots of its perfect
// subtrees, one for each bit set in its size. Append updates it in O(log n)
// time (amortised O(1) hashes), Root folds it into the root hash, and a
// Tree is rebuilt after a restart from the nodes a store holds (LoadTree).
//
// # Proofs
//
// InclusionProof and ConsistencyProof build the RFC 9162 proofs PATH and
// PROOF for any size up to the tree's, reading the nodes they need from a
// NodeReader in one call. MemStore is an in-memory NodeReader for tests and
// tools.
//
// # Heads and keys
//
// Sign and SignCheckpoint sign a verifier.Head with an Ed25519 key; the key
// is read from base64 or PEM (ParsePrivateKey, LoadKeyFile) or generated
// into a file only its owner can read (GenerateKeyFile).
package transparency
