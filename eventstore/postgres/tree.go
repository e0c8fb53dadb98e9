package postgres

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

// minStoredLevel is the lowest level of the interior nodes kept in
// event_tree_nodes. Leaves live in events.leaf_hash; a node of a level
// below this one is computed from its at most 2^(minStoredLevel-1) leaves
// when a proof needs it. So the table grows by about one row per 8 events
// (1/16 + 1/32 + …) rather than one per event.
const minStoredLevel = 4

// hashSize is the size of every tree hash.
const hashSize = verifier.HashSize

// errTreeBehind says the tree does not cover the log up to its head: a
// commit must catch it up first (catchUpTree).
var errTreeBehind = errors.New("the log's Merkle tree is behind its head")

// nodeColumns are tree nodes to insert, column by column.
type nodeColumns struct {
	levels []int16
	idxs   []int64
	hashes [][]byte
}

// decodeTree rebuilds the tree of size leaves from the frontier stored in
// event_log_head: the hashes of its perfect subtrees, largest first.
func decodeTree(size int64, frontier []byte) (*transparency.Tree, error) {
	if size < 0 || len(frontier) != hashSize*bits.OnesCount64(uint64(size)) {
		return nil, fmt.Errorf("the stored tree frontier is %d bytes for a tree of %d leaves, want %d", len(frontier), size, hashSize*bits.OnesCount64(uint64(max(size, 0))))
	}
	hashes := make([]transparency.Hash, len(frontier)/hashSize)
	for i := range hashes {
		hashes[i] = transparency.Hash(frontier[i*hashSize:])
	}
	return transparency.NewTreeFromFrontier(uint64(size), hashes)
}

// frontierBytes is the frontier of t as event_log_head stores it.
func frontierBytes(t *transparency.Tree) []byte {
	f := t.Frontier()
	out := make([]byte, 0, len(f)*hashSize)
	for _, n := range f {
		out = append(out, n.Hash[:]...)
	}
	return out
}

// leaf computes the leaf hash of row i, appends it to the tree and keeps
// the interior nodes it completes that are stored. Rows are hashed in
// order, each once.
func (c *columns) leaf(i int) error {
	if c.leaves == nil {
		c.leaves = make([]byte, 0, c.n*hashSize)
	}
	md := eventstore.Metadata{CorrelationID: c.corr[i].String, CausationID: c.cause[i].String, Actor: c.actor[i].String, RequestID: c.request[i].String}
	h, err := c.hasher.Hash(verifier.Event{
		Position: uint64(c.positions[i]), ID: c.ids[i].Bytes, StreamID: c.streams[i], StreamVersion: uint64(c.versions[i]),
		Type: c.types[i], SchemaVersion: int(c.schemas[i]), Data: []byte(c.data[i]), RecordedAt: c.recorded.UnixMicro(),
	}, md)
	if err != nil {
		return fmt.Errorf("hashing the event at position %d: %w", c.positions[i], err)
	}
	if want := uint64(c.positions[i]) - 1; c.tree.Size() != want {
		return fmt.Errorf("the event at position %d would be leaf %d of the tree", c.positions[i], c.tree.Size())
	}
	c.leaves = append(c.leaves, h[:]...)
	nodes, err := c.tree.Append(h)
	if err != nil {
		return err
	}
	c.nodes.add(nodes)
	return nil
}

// hashLeaves hashes every row (the INSERT path; COPY hashes as it goes).
func (c *columns) hashLeaves() error {
	for i := range c.n {
		if err := c.leaf(i); err != nil {
			return err
		}
	}
	return nil
}

// leafSlices returns the leaf hashes one slice per row, for bytea[].
func (c *columns) leafSlices() [][]byte {
	out := make([][]byte, c.n)
	for i := range out {
		out[i] = c.leaves[i*hashSize : (i+1)*hashSize]
	}
	return out
}

// add keeps the nodes of a level that is stored.
func (nc *nodeColumns) add(nodes []transparency.Node) {
	for _, n := range nodes {
		if n.Level < minStoredLevel {
			continue
		}
		h := n.Hash
		nc.levels = append(nc.levels, int16(n.Level))
		nc.idxs = append(nc.idxs, int64(n.Index))
		nc.hashes = append(nc.hashes, h[:])
	}
}

const insertNodes = `INSERT INTO event_tree_nodes (level, idx, hash) SELECT * FROM unnest($1::smallint[], $2::bigint[], $3::bytea[])`
