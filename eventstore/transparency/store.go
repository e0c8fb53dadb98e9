package transparency

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// NodeReader reads the hashes of completed nodes. ReadNodes returns one
// hash per id, in the order asked; an id whose node the reader does not
// hold is an error wrapping ErrNodeNotFound. Proof builders ask for all the
// nodes they need in one call, at most 2*64 of them.
type NodeReader interface {
	ReadNodes(ctx context.Context, ids []NodeID) ([]Hash, error)
}

// ErrNodeNotFound is what a NodeReader wraps for a node it does not hold:
// one not completed yet, or lost.
var ErrNodeNotFound = errors.New("transparency: tree node not found")

// readNodes reads ids from r and checks it answered each.
func readNodes(ctx context.Context, r NodeReader, ids []NodeID) ([]Hash, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	hashes, err := r.ReadNodes(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("reading %d tree nodes: %w", len(ids), err)
	}
	if len(hashes) != len(ids) {
		return nil, fmt.Errorf("reading %d tree nodes: the reader returned %d hashes", len(ids), len(hashes))
	}
	return hashes, nil
}

// MemStore keeps the nodes of one tree in memory, each level a slice in
// index order. It is safe for concurrent use.
type MemStore struct {
	mu     sync.RWMutex
	levels [][]Hash
}

// NewMemStore returns an empty store.
func NewMemStore() *MemStore { return &MemStore{} }

// ErrNodeConflict is returned by MemStore.Put for a node stored before with
// another hash: two different trees were written to one store.
var ErrNodeConflict = errors.New("transparency: tree node stored with another hash")

// Put stores nodes as Tree.Append returns them. Each must be the next
// index of its level or one stored before with the same hash (so a retried
// append is harmless); a gap or a different hash is an error and stores
// none of nodes.
func (s *MemStore) Put(nodes []Node) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	staged := make(map[uint8][]Hash) // new hashes per level, after the stored ones
	for _, n := range nodes {
		stored, add := s.level(n.Level), staged[n.Level]
		var have *Hash
		switch i, end := n.Index, uint64(len(stored)); {
		case i < end:
			have = &stored[i]
		case i-end < uint64(len(add)):
			have = &add[i-end]
		case i-end == uint64(len(add)):
			staged[n.Level] = append(add, n.Hash)
			continue
		default:
			return fmt.Errorf("storing node %s: level %d holds %d nodes, a gap", n.NodeID, n.Level, end+uint64(len(add)))
		}
		if *have != n.Hash {
			return fmt.Errorf("storing node %s: %w", n.NodeID, ErrNodeConflict)
		}
	}
	for level, add := range staged {
		for int(level) >= len(s.levels) {
			s.levels = append(s.levels, nil)
		}
		s.levels[level] = append(s.levels[level], add...)
	}
	return nil
}

// level returns the stored hashes of a level; the caller holds s.mu.
func (s *MemStore) level(l uint8) []Hash {
	if int(l) < len(s.levels) {
		return s.levels[l]
	}
	return nil
}

// ReadNodes implements NodeReader.
func (s *MemStore) ReadNodes(ctx context.Context, ids []NodeID) ([]Hash, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Hash, len(ids))
	for i, id := range ids {
		lv := s.level(id.Level)
		if id.Index >= uint64(len(lv)) {
			return nil, fmt.Errorf("node %s: %w", id, ErrNodeNotFound)
		}
		out[i] = lv[id.Index]
	}
	return out, nil
}
