package signedlog

import (
	"context"
	"errors"
	"fmt"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// ProverLog is the log a Prover proves things about.
type ProverLog interface {
	TreeHead(ctx context.Context) (uint64, transparency.Hash, error)
	ReadNodes(ctx context.Context, ids []transparency.NodeID) ([]transparency.Hash, error)
}

// HeadReader reads kept heads.
type HeadReader interface {
	LatestHead(ctx context.Context) (eventstore.SignedHead, bool, error)
	HeadAt(ctx context.Context, size uint64) (eventstore.SignedHead, bool, error)
	HeadsSince(ctx context.Context, since uint64, limit int) ([]eventstore.SignedHead, error)
}

// Prover builds the proofs auditors check, against the committed tree.
// Safe for concurrent use.
type Prover struct {
	log   ProverLog
	heads HeadReader
}

// NewProver returns a Prover over log and its kept heads.
func NewProver(log ProverLog, heads HeadReader) (*Prover, error) {
	if log == nil || heads == nil {
		return nil, errors.New("signed log: a prover needs a log and its heads")
	}
	return &Prover{log: log, heads: heads}, nil
}

// InclusionProof proves that the event at a position is a leaf of the tree
// of Size leaves (RFC 9162 section 2.1.3).
type InclusionProof struct {
	Position  uint64
	LeafIndex uint64
	Size      uint64
	LeafHash  transparency.Hash
	// Root is the root of the tree of Size leaves; trust it only when a
	// signed head of that size says it.
	Root transparency.Hash
	// Path is the audit path, nearest the leaf first.
	Path [][]byte
	// Signed is the kept head of Size, if there is one.
	Signed *eventstore.SignedHead
}

// ConsistencyProof proves that the tree of Second leaves extends the tree
// of First leaves (RFC 9162 section 2.1.4).
type ConsistencyProof struct {
	First, Second         uint64
	FirstRoot, SecondRoot transparency.Hash
	Path                  [][]byte
}

// Heads returns up to limit kept heads of size since or more, smallest
// first.
func (p *Prover) Heads(ctx context.Context, since uint64, limit int) ([]eventstore.SignedHead, error) {
	return p.heads.HeadsSince(ctx, since, limit)
}

// LatestHead returns the kept head of the largest size, or a not-found
// error when none is signed yet.
func (p *Prover) LatestHead(ctx context.Context) (eventstore.SignedHead, error) {
	h, ok, err := p.heads.LatestHead(ctx)
	if err != nil {
		return h, err
	}
	if !ok {
		return h, domain.NotFound("no_signed_head", "the log has no signed head yet: arr signs one every few events or seconds, or on `arr events checkpoint`")
	}
	return h, nil
}

// treeSize checks size against the committed tree; size 0 means the latest
// signed head's size.
func (p *Prover) treeSize(ctx context.Context, size uint64, field string) (uint64, error) {
	committed, _, err := p.log.TreeHead(ctx)
	if err != nil {
		return 0, err
	}
	if size == 0 {
		h, err := p.LatestHead(ctx)
		if err != nil {
			return 0, err
		}
		return h.Size, nil
	}
	if size > committed {
		return 0, domain.Invalid("tree_size_too_large", field, "%s is %d but the log's tree has %d leaves; ask for a size no larger, best one of a signed head (GET /v1/log/heads)", field, size, committed)
	}
	return size, nil
}

// Inclusion proves the event at position (leaf position-1) is in the tree
// of size leaves (0: the latest signed head's size).
func (p *Prover) Inclusion(ctx context.Context, position, size uint64) (InclusionProof, error) {
	if position == 0 {
		return InclusionProof{}, domain.Invalid("invalid_position", "position", "position is an event's log position, 1 or more")
	}
	size, err := p.treeSize(ctx, size, "size")
	if err != nil {
		return InclusionProof{}, err
	}
	if position > size {
		return InclusionProof{}, domain.Invalid("position_not_in_tree", "position", "position %d is not in the tree of %d leaves; ask for a size of at least %d", position, size, position)
	}
	index := position - 1
	nodes, err := p.log.ReadNodes(ctx, []transparency.NodeID{{Level: 0, Index: index}})
	if err != nil {
		return InclusionProof{}, fmt.Errorf("reading leaf %d: %w", index, err)
	}
	path, err := transparency.InclusionProof(ctx, p.log, index, size)
	if err != nil {
		return InclusionProof{}, err
	}
	root, err := transparency.RootAt(ctx, p.log, size)
	if err != nil {
		return InclusionProof{}, err
	}
	// The proof is checked before it is served: a store whose nodes
	// disagree answers an error, not a proof that fails at the auditor's.
	if err := verifier.VerifyInclusion(index, size, nodes[0][:], path, root[:]); err != nil {
		return InclusionProof{}, fmt.Errorf("the stored tree is inconsistent (run `arr events verify`): %w", err)
	}
	out := InclusionProof{Position: position, LeafIndex: index, Size: size, LeafHash: nodes[0], Root: root, Path: path}
	if h, ok, err := p.heads.HeadAt(ctx, size); err != nil {
		return InclusionProof{}, err
	} else if ok {
		out.Signed = &h
	}
	return out, nil
}

// CheckConsistencySizes is the rule for the sizes of a consistency proof
// PROOF(first, D[second]) (RFC 9162 section 2.1.4, which defines it for
// 0 < first <= second, as Trillian's log server does): first must be 1 or
// more (every tree extends the empty one; there is nothing to prove), a
// second that is given must be 1 or more (left out, it is the latest
// signed head's size), and first must not be above second. first equal
// to second is allowed: its proof is empty. Every failure is an
// ErrInvalid error naming the field. Pure; safe for concurrent use.
func CheckConsistencySizes(first, second uint64, secondGiven bool) error {
	switch {
	case first == 0:
		return domain.Invalid("invalid_first", "first", "first must be 1 or more: a consistency proof starts from a tree of at least one leaf (RFC 9162 section 2.1.4); every tree extends the empty tree, so from size 0 there is nothing to prove")
	case secondGiven && second == 0:
		return domain.Invalid("invalid_second", "second", "second must be 1 or more (leave it out for the latest signed head's size)")
	case secondGiven && first > second:
		return domain.Invalid("first_above_second", "first", "first (%d) must not be above second (%d): a log never shrinks", first, second)
	}
	return nil
}

// Consistency proves the tree of second leaves extends the tree of first
// leaves (second 0: the latest signed head's size). The sizes follow
// CheckConsistencySizes.
func (p *Prover) Consistency(ctx context.Context, first, second uint64) (ConsistencyProof, error) {
	if err := CheckConsistencySizes(first, second, second != 0); err != nil {
		return ConsistencyProof{}, err
	}
	second, err := p.treeSize(ctx, second, "second")
	if err != nil {
		return ConsistencyProof{}, err
	}
	if err := CheckConsistencySizes(first, second, true); err != nil {
		return ConsistencyProof{}, err
	}
	path, err := transparency.ConsistencyProof(ctx, p.log, first, second)
	if err != nil {
		return ConsistencyProof{}, err
	}
	r1, err := transparency.RootAt(ctx, p.log, first)
	if err != nil {
		return ConsistencyProof{}, err
	}
	r2, err := transparency.RootAt(ctx, p.log, second)
	if err != nil {
		return ConsistencyProof{}, err
	}
	return ConsistencyProof{First: first, Second: second, FirstRoot: r1, SecondRoot: r2, Path: path}, nil
}
