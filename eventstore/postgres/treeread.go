package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/transparency"
	"github.com/arr-dev/arr/eventstore/transparency/verifier"
)

var _ eventstore.MerkleLog = (*Store)(nil)

// TreeHead returns the committed tree's size and root hash.
func (s *Store) TreeHead(ctx context.Context) (uint64, transparency.Hash, error) {
	var size int64
	var frontier []byte
	if err := s.pool.QueryRow(ctx, `SELECT tree_size, tree_frontier FROM event_log_head`).Scan(&size, &frontier); err != nil {
		return 0, transparency.Hash{}, fmt.Errorf("reading the tree head: %w", err)
	}
	t, err := decodeTree(size, frontier)
	if err != nil {
		return 0, transparency.Hash{}, fmt.Errorf("reading the tree head: %w", err)
	}
	return t.Size(), t.Root(), nil
}

// ReadLeaves reads events after a position with their stored leaf hashes.
func (s *Store) ReadLeaves(ctx context.Context, after uint64, limit int) ([]eventstore.StoredLeaf, error) {
	if limit <= 0 {
		limit = eventstore.DefaultBatch
	}
	rows, err := s.pool.Query(ctx, `SELECT `+selectColumns+`, leaf_hash FROM events WHERE position > $1 ORDER BY position LIMIT $2`, int64(after), limit)
	if err != nil {
		return nil, fmt.Errorf("reading leaves after %d: %w", after, err)
	}
	return scanLeaves(rows, limit)
}

func scanLeaves(rows pgx.Rows, capacity int) ([]eventstore.StoredLeaf, error) {
	defer rows.Close()
	out := make([]eventstore.StoredLeaf, 0, min(capacity, 1<<14))
	for rows.Next() {
		var l eventstore.StoredLeaf
		var pos, ver int64
		var data []byte
		m := &l.Metadata
		if err := rows.Scan(&pos, &l.ID, &l.StreamID, &ver, &l.Type, &l.SchemaVersion, &data,
			&m.CorrelationID, &m.CausationID, &m.Actor, &m.RequestID, &l.RecordedAt, &l.LeafHash); err != nil {
			return nil, fmt.Errorf("scanning event: %w", err)
		}
		l.Position, l.StreamVersion, l.Data = uint64(pos), uint64(ver), data
		l.RecordedAt = l.RecordedAt.UTC()
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	return out, nil
}

// ReadNodes implements transparency.NodeReader over the committed tree, in
// one round trip: stored nodes from event_tree_nodes, leaves from
// events.leaf_hash, and nodes of levels 1 to 3 folded from their leaves.
func (s *Store) ReadNodes(ctx context.Context, ids []transparency.NodeID) ([]transparency.Hash, error) {
	var levels []int16
	var idxs, positions []int64
	for _, id := range ids {
		if id.Level >= minStoredLevel {
			levels, idxs = append(levels, int16(id.Level)), append(idxs, int64(id.Index))
			continue
		}
		first, ok := firstLeaf(id)
		if !ok {
			return nil, fmt.Errorf("node %s: %w", id, transparency.ErrNodeNotFound)
		}
		for j := uint64(0); j < 1<<id.Level; j++ {
			positions = append(positions, int64(first+j+1))
		}
	}
	stored := make(map[transparency.NodeID]transparency.Hash, len(levels))
	leaves := make(map[uint64]transparency.Hash, len(positions))
	b := &pgx.Batch{}
	if len(levels) > 0 {
		b.Queue(`SELECT n.level, n.idx, n.hash FROM event_tree_nodes n JOIN unnest($1::smallint[], $2::bigint[]) AS x(l, i) ON n.level = x.l AND n.idx = x.i`,
			levels, idxs).Query(func(rows pgx.Rows) error {
			var l int16
			var i int64
			var h []byte
			_, err := pgx.ForEachRow(rows, []any{&l, &i, &h}, func() error {
				if len(h) == hashSize {
					stored[transparency.NodeID{Level: uint8(l), Index: uint64(i)}] = transparency.Hash(h)
				}
				return nil
			})
			return err
		})
	}
	if len(positions) > 0 {
		b.Queue(`SELECT position, leaf_hash FROM events WHERE position = ANY($1) AND leaf_hash IS NOT NULL`, positions).Query(func(rows pgx.Rows) error {
			var p int64
			var h []byte
			_, err := pgx.ForEachRow(rows, []any{&p, &h}, func() error {
				if len(h) == hashSize {
					leaves[uint64(p-1)] = transparency.Hash(h)
				}
				return nil
			})
			return err
		})
	}
	if b.Len() > 0 {
		if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
			return nil, fmt.Errorf("reading %d tree nodes: %w", len(ids), err)
		}
	}
	out := make([]transparency.Hash, len(ids))
	for k, id := range ids {
		var ok bool
		if id.Level >= minStoredLevel {
			out[k], ok = stored[id]
		} else {
			out[k], ok = foldLeaves(id, leaves)
		}
		if !ok {
			return nil, fmt.Errorf("node %s: %w", id, transparency.ErrNodeNotFound)
		}
	}
	return out, nil
}

// firstLeaf is the index of the first leaf under id, if it fits a uint64
// and the leaf has a position.
func firstLeaf(id transparency.NodeID) (uint64, bool) {
	first := id.Index << id.Level
	if first>>id.Level != id.Index || first > 1<<62 {
		return 0, false
	}
	return first, true
}

// foldLeaves is the hash of the node id of a level below minStoredLevel,
// from its leaves.
func foldLeaves(id transparency.NodeID, leaves map[uint64]transparency.Hash) (transparency.Hash, bool) {
	first, _ := firstLeaf(id)
	var level [1 << (minStoredLevel - 1)]transparency.Hash
	n := 1 << id.Level
	for j := range n {
		h, ok := leaves[first+uint64(j)]
		if !ok {
			return transparency.Hash{}, false
		}
		level[j] = h
	}
	for ; n > 1; n /= 2 {
		for j := 0; j < n/2; j++ {
			level[j] = verifier.NodeHash(level[2*j][:], level[2*j+1][:])
		}
	}
	return level[0], true
}
