package signedlog

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// VerifyLog is the log Verify walks.
type VerifyLog interface {
	Head(ctx context.Context) (uint64, error)
	TreeHead(ctx context.Context) (uint64, transparency.Hash, error)
	ReadNodes(ctx context.Context, ids []transparency.NodeID) ([]transparency.Hash, error)
	ReadLeaves(ctx context.Context, after uint64, limit int) ([]eventstore.StoredLeaf, error)
}

// VerifyOptions say what Verify checks the log against.
type VerifyOptions struct {
	// From is the first position checked (0 and 1: the whole log). The
	// tree of the events before it is taken from the store's nodes.
	From uint64
	// Heads are signed heads whose signatures the caller has checked
	// (an auditor's own, and the log's kept ones): the events must give
	// each one's root at its size. Heads smaller than From-1 are skipped.
	Heads []verifier.Head
	// Progress, if set, is called now and then with the events checked
	// and the events to check.
	Progress func(done, total uint64)
	// Batch is the events read per query. Default 10000.
	Batch int
}

// Problem kinds, the first word of what Verify found.
const (
	Altered   = "altered"   // the event differs from the one appended at its position
	Inserted  = "inserted"  // an event was put into the log outside arr's appends
	Removed   = "removed"   // an event appended at this position is gone
	Rewritten = "rewritten" // leaf hashes or tree nodes were changed to match changed events
	Unsigned  = "unsigned"  // the events do not give a signed head's root
)

// Problem is the first thing Verify found wrong.
type Problem struct {
	// Kind is one of Altered, Inserted, Removed, Rewritten, Unsigned.
	Kind string `json:"kind"`
	// Position is the first bad position, when it can be named; 0 when
	// only a range can (Rewritten, Unsigned).
	Position uint64 `json:"position,omitempty"`
	// After and Upto bound the change when it is a range: it is at a
	// position in (After, Upto].
	After uint64 `json:"after,omitempty"`
	Upto  uint64 `json:"upto,omitempty"`
	// EventID is the id of the event now at Position, if any.
	EventID string `json:"event_id,omitempty"`
	Message string `json:"message"`
}

// Report is what Verify found.
type Report struct {
	OK bool `json:"ok"`
	// From and To are the first and last positions checked.
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
	// Checked is the number of events checked.
	Checked uint64 `json:"checked"`
	// TreeSize and Root are the recomputed tree at the last event checked.
	TreeSize uint64 `json:"tree_size"`
	Root     string `json:"root"`
	// HeadsMatched are the sizes of the heads whose roots the events gave.
	HeadsMatched []uint64 `json:"heads_matched"`
	// NotInTree counts events after the tree's size, which the store has
	// not added to the tree yet (it does at the next append).
	NotInTree uint64   `json:"not_in_tree,omitempty"`
	Problem   *Problem `json:"problem,omitempty"`
}

// Verify reads the log from opts.From on, recomputes every event's leaf
// hash from its content and the tree from the leaves, and checks in
// position order: positions follow one another; each event's stored leaf
// hash is the hash of its content; each stored interior node is the hash
// the recomputed tree has; at the size of each head the recomputed root is
// the signed one; and the log holds as many events as its tree and its
// heads say. It stops at the first failure and names it (Report.Problem).
// An error is returned only when the log cannot be read.
func Verify(ctx context.Context, log VerifyLog, opts VerifyOptions) (Report, error) {
	if opts.Batch <= 0 {
		opts.Batch = 10_000
	}
	from := max(opts.From, 1)
	rep := Report{From: from, HeadsMatched: []uint64{}}
	treeSize, storedRoot, err := log.TreeHead(ctx)
	if err != nil {
		return rep, err
	}
	head, err := log.Head(ctx)
	if err != nil {
		return rep, err
	}
	heads := slices.Clone(opts.Heads)
	slices.SortFunc(heads, func(a, b verifier.Head) int { return cmp.Compare(a.Size, b.Size) })
	heads = slices.DeleteFunc(heads, func(h verifier.Head) bool { return h.Size < from-1 })
	var tree *transparency.Tree
	if from == 1 {
		tree = transparency.NewTree()
	} else {
		if from-1 > treeSize {
			return rep, fmt.Errorf("--from %d is beyond the tree's %d leaves", from, treeSize)
		}
		if tree, err = transparency.LoadTree(ctx, log, from-1); err != nil {
			return rep, err
		}
	}
	w := &walk{rep: &rep, tree: tree, heads: heads, treeSize: treeSize, last: from - 1}
	if w.checkHeads() {
		return rep, nil
	}
	total := max(head, treeSize, lastSize(heads)) - (from - 1)
	batches := make(chan batch, 2)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go readBatches(rctx, log, from-1, treeSize, opts.Batch, batches)
	for b := range batches {
		if b.err != nil {
			return rep, b.err
		}
		if w.batch(b) {
			return rep, nil
		}
		if opts.Progress != nil {
			opts.Progress(rep.Checked, total)
		}
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	w.finish(storedRoot)
	return rep, nil
}

func lastSize(heads []verifier.Head) uint64 {
	if len(heads) == 0 {
		return 0
	}
	return heads[len(heads)-1].Size
}

// batch is events read in one query and the stored nodes their leaves
// complete.
type batch struct {
	leaves []eventstore.StoredLeaf
	nodes  map[transparency.NodeID]transparency.Hash
	err    error
}

// readBatches reads the log after position `after` and sends it in
// batches, with the stored nodes of level 4 and up that the batch's leaves
// complete (read ahead while the walk hashes the batch before).
func readBatches(ctx context.Context, log VerifyLog, after, treeSize uint64, size int, out chan<- batch) {
	defer close(out)
	for {
		leaves, err := log.ReadLeaves(ctx, after, size)
		if err != nil {
			send(ctx, out, batch{err: err})
			return
		}
		if len(leaves) == 0 {
			return
		}
		b := batch{leaves: leaves}
		// Leaf indices from after on, as far as the tree goes: if
		// positions are off, the walk stops before it needs a node.
		var ids []transparency.NodeID
		for i := after; i < min(after+uint64(len(leaves)), treeSize); i++ {
			for _, id := range transparency.CompletedBy(i)[1:] {
				if id.Level >= storedLevel {
					ids = append(ids, id)
				}
			}
		}
		if len(ids) > 0 {
			hashes, err := log.ReadNodes(ctx, ids)
			if err != nil && !errors.Is(err, transparency.ErrNodeNotFound) {
				send(ctx, out, batch{err: err})
				return
			}
			b.nodes = make(map[transparency.NodeID]transparency.Hash, len(ids))
			if err == nil {
				for i, id := range ids {
					b.nodes[id] = hashes[i]
				}
			} else if err := readEach(ctx, log, ids, b.nodes); err != nil {
				send(ctx, out, batch{err: err})
				return
			}
		}
		if !send(ctx, out, b) {
			return
		}
		after = leaves[len(leaves)-1].Position
	}
}

// readEach reads nodes one by one, leaving out those not found.
func readEach(ctx context.Context, log VerifyLog, ids []transparency.NodeID, into map[transparency.NodeID]transparency.Hash) error {
	for _, id := range ids {
		h, err := log.ReadNodes(ctx, []transparency.NodeID{id})
		if errors.Is(err, transparency.ErrNodeNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		into[id] = h[0]
	}
	return nil
}

func send(ctx context.Context, out chan<- batch, b batch) bool {
	select {
	case out <- b:
		return true
	case <-ctx.Done():
		return false
	}
}

// storedLevel is the lowest level of interior node a MerkleLog stores
// (the PostgreSQL store's; a lower node read back is folded from the
// same leaves the walk checks, so checking it would add nothing).
const storedLevel = 4

// walk is Verify's state.
type walk struct {
	rep      *Report
	tree     *transparency.Tree
	heads    []verifier.Head // not reached yet, smallest first
	treeSize uint64
	hasher   eventstore.LeafHasher
	matched  uint64 // the largest head size matched
	last     uint64 // the position of the last event read
	open     bool   // an event not in the tree was read: the rest are not either
}

func (w *walk) fail(p Problem) bool {
	w.rep.OK = false
	w.rep.Problem = &p
	w.rep.TreeSize = w.tree.Size()
	root := w.tree.Root()
	w.rep.Root = fmt.Sprintf("%x", root)
	return true
}

// checkHeads compares the heads of the tree's current size with its root.
func (w *walk) checkHeads() bool {
	for len(w.heads) > 0 && w.heads[0].Size == w.tree.Size() {
		h := w.heads[0]
		w.heads = w.heads[1:]
		if root := w.tree.Root(); root != h.Root {
			return w.fail(Problem{Kind: Unsigned, After: w.matched, Upto: h.Size,
				Message: fmt.Sprintf("the first %d events give the root %x, but the head of size %d signed %x: every stored leaf hash and tree node before it matches the events, so an event in positions %d..%d was changed and its leaf hash and the tree rewritten to match",
					h.Size, root, h.Size, h.Root, w.matched+1, h.Size)})
		}
		w.matched = h.Size
		if n := len(w.rep.HeadsMatched); n == 0 || w.rep.HeadsMatched[n-1] != h.Size {
			w.rep.HeadsMatched = append(w.rep.HeadsMatched, h.Size)
		}
	}
	return false
}

// batch checks one batch of events; true when it found a problem.
func (w *walk) batch(b batch) bool {
	for k, l := range b.leaves {
		want := w.last + 1
		if l.Position != want {
			return w.fail(Problem{Kind: Removed, Position: want,
				Message: fmt.Sprintf("position %d is missing: the event appended there was removed (the log goes on at position %d)", want, l.Position)})
		}
		w.last = l.Position
		if w.open || (l.Position > w.treeSize && l.LeafHash == nil) {
			// Not in the tree yet: the store adds it (and the ones after
			// it) at its next append. Nothing to check it against.
			w.open = true
			w.rep.NotInTree++
			w.rep.To = l.Position
			continue
		}
		lh, err := w.hasher.HashEvent(l.Event)
		if err != nil {
			return w.fail(Problem{Kind: Altered, Position: l.Position, EventID: l.ID.String(), Message: fmt.Sprintf("the event at position %d cannot be encoded as a leaf: %v", l.Position, err)})
		}
		if !bytes.Equal(l.LeafHash, lh[:]) {
			var next *eventstore.StoredLeaf
			if k+1 < len(b.leaves) {
				next = &b.leaves[k+1]
			}
			return w.fail(w.mismatch(l, next))
		}
		nodes, err := w.tree.Append(lh)
		if err != nil {
			return w.fail(Problem{Kind: Inserted, Position: l.Position, Message: err.Error()})
		}
		for _, n := range nodes[1:] {
			if n.Level < storedLevel || n.Index<<n.Level+(1<<n.Level) > w.treeSize {
				continue // folded from leaves, or beyond the stored tree
			}
			stored, ok := b.nodes[n.NodeID]
			first, last := n.Index<<n.Level+1, (n.Index+1)<<n.Level
			switch {
			case !ok:
				return w.fail(Problem{Kind: Rewritten, After: first - 1, Upto: last,
					Message: fmt.Sprintf("the stored tree has no node %s over positions %d..%d", n.NodeID, first, last)})
			case stored != n.Hash:
				return w.fail(Problem{Kind: Rewritten, After: first - 1, Upto: last,
					Message: fmt.Sprintf("the stored tree node %s over positions %d..%d is not the hash of their events: an event there was changed and its leaf hash rewritten to match (or the node was)", n.NodeID, first, last)})
			}
		}
		w.rep.Checked++
		w.rep.To = l.Position
		if w.checkHeads() {
			return true
		}
	}
	return false
}

// mismatch names what happened to an event whose content does not give its
// stored leaf hash, looking at the event after it when there is one.
func (w *walk) mismatch(l eventstore.StoredLeaf, next *eventstore.StoredLeaf) Problem {
	p := Problem{Position: l.Position, EventID: l.ID.String()}
	at := func(e eventstore.StoredLeaf, pos uint64) bool {
		if e.LeafHash == nil || pos == 0 {
			return false
		}
		e.Position = pos
		h, err := w.hasher.HashEvent(e.Event)
		return err == nil && bytes.Equal(e.LeafHash, h[:])
	}
	switch {
	case next != nil && at(*next, next.Position-1):
		p.Kind = Inserted
		p.Message = fmt.Sprintf("the event at position %d (%s in %s) was inserted: it was never appended there, and the events after it were moved up by one", l.Position, l.ID, l.StreamID)
	case l.LeafHash == nil:
		p.Kind = Inserted
		p.Message = fmt.Sprintf("the event at position %d (%s in %s) has no leaf hash: it was put into the log outside arr's appends", l.Position, l.ID, l.StreamID)
	case at(l, l.Position+1):
		p.Kind = Removed
		p.Message = fmt.Sprintf("the event appended at position %d was removed: the event there now (%s in %s) was appended at position %d, and the events after it were moved down by one", l.Position, l.ID, l.StreamID, l.Position+1)
	default:
		p.Kind = Altered
		p.Message = fmt.Sprintf("the event at position %d (%s in %s) is not the event appended there: its content does not give its stored leaf hash (altered, replaced or moved from another position)", l.Position, l.ID, l.StreamID)
	}
	return p
}

// finish checks what is left once the events ran out: the tree's and the
// heads' sizes, and the stored root.
func (w *walk) finish(storedRoot transparency.Hash) {
	end := w.tree.Size() // events checked, and before From
	switch {
	case w.last < w.treeSize:
		w.fail(Problem{Kind: Removed, Position: end + 1,
			Message: fmt.Sprintf("the log ends at position %d but its tree has %d leaves: the events from position %d on were removed", end, w.treeSize, end+1)})
		return
	case len(w.heads) > 0:
		h := w.heads[0]
		w.fail(Problem{Kind: Removed, Position: end + 1,
			Message: fmt.Sprintf("the log ends at position %d but a head signed a tree of %d events: the events from position %d on were removed", end, h.Size, end+1)})
		return
	case end == w.treeSize && w.tree.Root() != storedRoot:
		w.fail(Problem{Kind: Rewritten, After: w.matched, Upto: end,
			Message: fmt.Sprintf("the store's tree head says root %x at size %d, the events give %x", storedRoot, end, w.tree.Root())})
		return
	}
	w.rep.OK = true
	w.rep.TreeSize = end
	root := w.tree.Root()
	w.rep.Root = fmt.Sprintf("%x", root)
}
