package eventstore

import (
	"context"
	"errors"
	"time"

	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// MerkleLog is a Store whose events are the leaves of an RFC 6962 Merkle
// tree (docs/transparency.md): every commit computes its events' leaf
// hashes and extends the tree in the transaction that assigns their
// positions, so the tree's order is the log's order. Leaf i is the event
// at position i+1: a MerkleLog's positions start at 1 and have no gaps.
// The PostgreSQL store is one; the KurrentDB store is not (see its package
// comment). Implementations are safe for concurrent use.
type MerkleLog interface {
	Store
	// TreeHead returns the committed tree's size and root hash. The size
	// is the head position: every committed event is a leaf.
	TreeHead(ctx context.Context) (size uint64, root transparency.Hash, err error)
	// ReadNodes reads nodes of the committed tree (transparency.NodeReader);
	// a node not completed yet is an error wrapping
	// transparency.ErrNodeNotFound.
	ReadNodes(ctx context.Context, ids []transparency.NodeID) ([]transparency.Hash, error)
	// ReadLeaves reads the log like ReadAll, each event with the leaf hash
	// stored with it (nil for one stored without: the tree has not
	// reached it yet).
	ReadLeaves(ctx context.Context, after uint64, limit int) ([]StoredLeaf, error)
}

// StoredLeaf is an event as the log holds it, with its stored leaf hash.
type StoredLeaf struct {
	Event
	// LeafHash is the hash stored at commit; nil if there is none.
	LeafHash []byte
}

// ErrNoMerkleTree is what a store without a Merkle tree answers a request
// for heads or proofs with (the KurrentDB store).
var ErrNoMerkleTree = errors.New("this event store keeps no Merkle tree: the tamper-evident log (signed heads, proofs, arr events verify) needs the PostgreSQL event store (ARR_EVENTSTORE=postgres)")

// SignedHead is a signed tree head as the log keeps and serves it: the
// head, its C2SP signed checkpoint and the note verifier key of the key
// that signed it (docs/transparency.md, section 4).
type SignedHead struct {
	verifier.Head
	// Checkpoint is the signed note: the head's text, an empty line and
	// the log's signature line.
	Checkpoint []byte
	// VerifierKey publishes the public key that signed it.
	VerifierKey string
}

// DisownedHead is a kept head the operator disowned (`arr events
// disown-heads`): one the log's key did not sign. It stays kept, but is
// no longer served, used or extended. The event at EventPosition
// (LogHeadsDisowned) records the decision in the log.
type DisownedHead struct {
	Size           uint64    `json:"size"`
	KeyFingerprint string    `json:"key_fingerprint"`
	Reason         string    `json:"reason"`
	DisownedBy     string    `json:"disowned_by"`
	DisownedAt     time.Time `json:"disowned_at"`
	EventPosition  uint64    `json:"event_position"`
}
