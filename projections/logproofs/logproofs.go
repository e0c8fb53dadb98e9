package logproofs

import (
	"context"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/signedlog"
)

// Head is a signed tree head.
type Head struct {
	// Origin names the log (and the key that signs it).
	Origin string
	// Size is the number of leaves (events) the head covers.
	Size uint64
	// Root is the tree's root hash at Size.
	Root [32]byte
	// Timestamp is when it was signed, in milliseconds since the epoch.
	Timestamp int64
	// Checkpoint is the signed note (C2SP tlog-checkpoint).
	Checkpoint []byte
	// VerifierKey is the public key that signed it.
	VerifierKey string
}

// InclusionProof proves that the event at Position is leaf LeafIndex of
// the tree of Size leaves (RFC 9162 §2.1.3).
type InclusionProof struct {
	Position, LeafIndex, Size uint64
	LeafHash, Root            [32]byte
	// Path is the audit path, nearest the leaf first.
	Path [][]byte
	// Signed is the kept head of Size, if there is one.
	Signed *Head
}

// ConsistencyProof proves that the tree of Second leaves extends the tree
// of First (RFC 9162 §2.1.4).
type ConsistencyProof struct {
	First, Second         uint64
	FirstRoot, SecondRoot [32]byte
	Path                  [][]byte
}

// Unavailable says why an event store without a Merkle tree (KurrentDB)
// has no heads or proofs.
var Unavailable = eventstore.ErrNoMerkleTree.Error()

// Queries reads heads and proofs. Safe for concurrent use.
type Queries struct{ p *signedlog.Prover }

// New reads through p.
func New(p *signedlog.Prover) *Queries { return &Queries{p: p} }

// LatestHead returns the latest signed head.
func (q *Queries) LatestHead(ctx context.Context) (Head, error) {
	h, err := q.p.LatestHead(ctx)
	if err != nil {
		return Head{}, err
	}
	return headOf(h), nil
}

// Heads returns up to limit signed heads of size since or more, smallest
// first.
func (q *Queries) Heads(ctx context.Context, since uint64, limit int) ([]Head, error) {
	hs, err := q.p.Heads(ctx, since, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Head, len(hs))
	for i, h := range hs {
		out[i] = headOf(h)
	}
	return out, nil
}

// Inclusion proves the event at position in the tree of size leaves (0:
// the latest signed head's size).
func (q *Queries) Inclusion(ctx context.Context, position, size uint64) (InclusionProof, error) {
	p, err := q.p.Inclusion(ctx, position, size)
	if err != nil {
		return InclusionProof{}, err
	}
	out := InclusionProof{Position: p.Position, LeafIndex: p.LeafIndex, Size: p.Size, LeafHash: p.LeafHash, Root: p.Root, Path: p.Path}
	if p.Signed != nil {
		h := headOf(*p.Signed)
		out.Signed = &h
	}
	return out, nil
}

// CheckConsistencySizes is the rule for the sizes of a consistency
// request (signedlog.CheckConsistencySizes): first 1 or more, a given
// second 1 or more, first not above second. Routes apply it before any
// read. Pure; safe for concurrent use.
func CheckConsistencySizes(first, second uint64, secondGiven bool) error {
	return signedlog.CheckConsistencySizes(first, second, secondGiven)
}

// Consistency proves that the tree of second leaves (0: the latest signed
// head's size) extends the tree of first.
func (q *Queries) Consistency(ctx context.Context, first, second uint64) (ConsistencyProof, error) {
	p, err := q.p.Consistency(ctx, first, second)
	if err != nil {
		return ConsistencyProof{}, err
	}
	return ConsistencyProof{First: p.First, Second: p.Second, FirstRoot: p.FirstRoot, SecondRoot: p.SecondRoot, Path: p.Path}, nil
}

func headOf(h eventstore.SignedHead) Head {
	return Head{Origin: h.Origin, Size: h.Size, Root: h.Root, Timestamp: h.Timestamp, Checkpoint: h.Checkpoint, VerifierKey: h.VerifierKey}
}
