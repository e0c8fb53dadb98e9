package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/eventstore"
	"github.com/arr-dev/arr/eventstore/transparency"
)

// SaveHead keeps a signed head unless one of its size is kept already
// (disowned or not); saved says whether it was. Heads are never changed
// or removed.
func (s *Store) SaveHead(ctx context.Context, h eventstore.SignedHead) (saved bool, err error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO event_tree_heads (size, root, timestamp_ms, origin, verifier_key, checkpoint)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (size) DO NOTHING`,
		int64(h.Size), h.Root[:], h.Timestamp, h.Origin, h.VerifierKey, string(h.Checkpoint))
	if err != nil {
		return false, fmt.Errorf("saving the signed head of size %d: %w", h.Size, err)
	}
	return tag.RowsAffected() == 1, nil
}

const headColumns = `size, root, timestamp_ms, origin, verifier_key, checkpoint`

// ownHeads are the kept heads not disowned: the only ones read, served
// and extended.
const ownHeads = `(SELECT * FROM event_tree_heads h WHERE NOT EXISTS (SELECT 1 FROM event_tree_heads_disowned d WHERE d.size = h.size)) heads`

// LatestHead returns the kept head of the largest size, disowned heads
// aside; ok is false when there is none.
func (s *Store) LatestHead(ctx context.Context) (h eventstore.SignedHead, ok bool, err error) {
	return s.oneHead(ctx, `SELECT `+headColumns+` FROM `+ownHeads+` ORDER BY size DESC LIMIT 1`)
}

// HeadAt returns the kept head of a size; ok is false when none is kept
// (or it was disowned).
func (s *Store) HeadAt(ctx context.Context, size uint64) (h eventstore.SignedHead, ok bool, err error) {
	return s.oneHead(ctx, `SELECT `+headColumns+` FROM `+ownHeads+` WHERE size = $1`, int64(size))
}

// HeadsSince returns up to limit kept heads of size since or more,
// smallest first, disowned heads aside.
func (s *Store) HeadsSince(ctx context.Context, since uint64, limit int) ([]eventstore.SignedHead, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+headColumns+` FROM `+ownHeads+` WHERE size >= $1 ORDER BY size LIMIT $2`, int64(min(since, 1<<63-1)), limit)
	if err != nil {
		return nil, fmt.Errorf("reading signed heads: %w", err)
	}
	return pgx.CollectRows(rows, scanHead)
}

// AllHeads returns every kept head of a size in [from, to], smallest
// first, disowned heads aside.
func (s *Store) AllHeads(ctx context.Context, from, to uint64) ([]eventstore.SignedHead, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+headColumns+` FROM `+ownHeads+` WHERE size BETWEEN $1 AND $2 ORDER BY size`, int64(min(from, 1<<63-1)), int64(min(to, 1<<63-1)))
	if err != nil {
		return nil, fmt.Errorf("reading signed heads: %w", err)
	}
	return pgx.CollectRows(rows, scanHead)
}

func (s *Store) oneHead(ctx context.Context, sql string, args ...any) (eventstore.SignedHead, bool, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return eventstore.SignedHead{}, false, fmt.Errorf("reading a signed head: %w", err)
	}
	h, err := pgx.CollectOneRow(rows, scanHead)
	if errors.Is(err, pgx.ErrNoRows) {
		return eventstore.SignedHead{}, false, nil
	}
	if err != nil {
		return eventstore.SignedHead{}, false, fmt.Errorf("reading a signed head: %w", err)
	}
	return h, true, nil
}

func scanHead(row pgx.CollectableRow) (eventstore.SignedHead, error) {
	var h eventstore.SignedHead
	var size int64
	var root []byte
	var checkpoint string
	if err := row.Scan(&size, &root, &h.Timestamp, &h.Origin, &h.VerifierKey, &checkpoint); err != nil {
		return h, err
	}
	if len(root) != hashSize {
		return h, fmt.Errorf("the signed head of size %d has a %d-byte root", size, len(root))
	}
	h.Size, h.Root, h.Checkpoint = uint64(size), transparency.Hash(root), []byte(checkpoint)
	return h, nil
}
