package postgres

import (
	"bytes"
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/eventstore"
)

// catchUpChunk is the most events one catch-up transaction adds to the
// tree; the head stays locked (appends wait) for one chunk at a time.
const catchUpChunk = 20_000

// CatchUpTree makes the Merkle tree cover every event in the log. It has
// work only on a log with events the tree does not have yet: those stored
// before the tree existed, or by an arr without it. It hashes them in
// position order, stores their leaf hashes and the nodes they complete,
// and logs its progress. Appends call it themselves when they find the
// tree behind; calling it at start-up (as arr does) keeps that wait out of
// the first append. An event whose stored leaf hash does not match its
// content, or a gap in the positions, stops it with an error: the log was
// altered (`arr events verify` names where). A tree that covers the log
// is found so without the head lock: a process starting does not lock
// the head unless there is work.
func (s *Store) CatchUpTree(ctx context.Context) error {
	var current bool
	if err := s.pool.QueryRow(ctx, `SELECT tree_size = position FROM event_log_head`).Scan(&current); err != nil {
		return fmt.Errorf("catching the Merkle tree up with the log: %w", err)
	}
	if current {
		return nil
	}
	return s.catchUpTree(ctx)
}

func (s *Store) catchUpTree(ctx context.Context) error {
	for first := true; ; first = false {
		c, err := s.catchUpChunk(ctx)
		if err != nil {
			return fmt.Errorf("catching the Merkle tree up with the log: %w", err)
		}
		if c.done {
			if !first {
				s.cfg.Logger.Info("the Merkle tree covers the whole log", "size", c.size)
			}
			return nil
		}
		s.cfg.Logger.Info("catching the Merkle tree up with the log", "size", c.size, "head", c.head)
	}
}

// chunk is the outcome of one catch-up transaction.
type chunk struct {
	// done says the tree already covered the log: nothing was added.
	done bool
	// size is the tree's size after the chunk; head is the log's.
	size, head int64
}

// catchUpChunk adds up to catchUpChunk events to the tree in one
// transaction under the head lock.
func (s *Store) catchUpChunk(ctx context.Context) (chunk, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return chunk{}, err
	}
	var size, head int64
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck
	var frontier []byte
	// Like an append, it lets the server end it if it idles with the head
	// locked for HeadIdle (its process frozen; see lockHead).
	if err := tx.QueryRow(ctx, `SELECT position, tree_size, tree_frontier, set_config('idle_in_transaction_session_timeout', $1, true)
		FROM event_log_head WHERE id FOR UPDATE`, s.headIdle).Scan(&head, &size, &frontier, nil); err != nil {
		return chunk{}, fmt.Errorf("locking the log head: %w", err)
	}
	if size > head {
		return chunk{}, fmt.Errorf("the tree has %d leaves but the log's head is at position %d: events were removed (run `arr events verify`)", size, head)
	}
	if size == head {
		return chunk{done: true, size: size, head: head}, tx.Commit(ctx)
	}
	tree, err := decodeTree(size, frontier)
	if err != nil {
		return chunk{}, err
	}
	upTo := min(head, size+catchUpChunk)
	rows, err := tx.Query(ctx, `SELECT `+selectColumns+`, leaf_hash FROM events WHERE position > $1 AND position <= $2 ORDER BY position`, size, upTo)
	if err != nil {
		return chunk{}, fmt.Errorf("reading events %d to %d: %w", size+1, upTo, err)
	}
	leaves, err := scanLeaves(rows, int(upTo-size))
	if err != nil {
		return chunk{}, err
	}
	var h eventstore.LeafHasher
	var nodes nodeColumns
	var setPos []int64
	var setHash [][]byte
	for _, l := range leaves {
		if want := tree.Size() + 1; l.Position != want {
			return chunk{}, fmt.Errorf("position %d is missing from the log (the next event is at %d): run `arr events verify`", want, l.Position)
		}
		lh, err := h.HashEvent(l.Event)
		if err != nil {
			return chunk{}, fmt.Errorf("hashing the event at position %d: %w", l.Position, err)
		}
		switch {
		case l.LeafHash == nil:
			setPos, setHash = append(setPos, int64(l.Position)), append(setHash, append([]byte(nil), lh[:]...))
		case !bytes.Equal(l.LeafHash, lh[:]):
			return chunk{}, fmt.Errorf("the event at position %d does not match its stored leaf hash: run `arr events verify`", l.Position)
		}
		added, err := tree.Append(lh)
		if err != nil {
			return chunk{}, err
		}
		nodes.add(added)
	}
	if int64(tree.Size()) != upTo {
		return chunk{}, fmt.Errorf("positions %d to %d are missing from the log: run `arr events verify`", tree.Size()+1, upTo)
	}
	b := &pgx.Batch{}
	b.Queue(`UPDATE events SET leaf_hash = x.h FROM unnest($1::bigint[], $2::bytea[]) AS x(p, h) WHERE position = x.p AND leaf_hash IS NULL`, setPos, setHash)
	if len(nodes.levels) > 0 {
		b.Queue(insertNodes, nodes.levels, nodes.idxs, nodes.hashes)
	}
	b.Queue(`UPDATE event_log_head SET tree_size = $1, tree_frontier = $2 WHERE id`, int64(tree.Size()), frontierBytes(tree))
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return chunk{}, fmt.Errorf("storing the tree of events %d to %d: %w", size+1, upTo, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return chunk{}, err
	}
	return chunk{size: upTo, head: head}, nil
}
