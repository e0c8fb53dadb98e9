package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/eventstore"
)

// DisownHead records that the kept head of d.Size is disowned: from then
// on it is not read, served or extended (it stays kept). disowned is false
// when it was disowned already; a size with no kept head is an error.
func (s *Store) DisownHead(ctx context.Context, d eventstore.DisownedHead) (disowned bool, err error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO event_tree_heads_disowned (size, key_fingerprint, reason, disowned_by, disowned_at, event_position)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (size) DO NOTHING`,
		int64(d.Size), d.KeyFingerprint, d.Reason, d.DisownedBy, d.DisownedAt, int64(d.EventPosition))
	if err != nil {
		return false, fmt.Errorf("disowning the signed head of size %d: %w", d.Size, err)
	}
	return tag.RowsAffected() == 1, nil
}

// DisownedHeads returns every disowned head, smallest first.
func (s *Store) DisownedHeads(ctx context.Context) ([]eventstore.DisownedHead, error) {
	rows, err := s.pool.Query(ctx, `SELECT size, key_fingerprint, reason, disowned_by, disowned_at, event_position FROM event_tree_heads_disowned ORDER BY size`)
	if err != nil {
		return nil, fmt.Errorf("reading the disowned heads: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (eventstore.DisownedHead, error) {
		var d eventstore.DisownedHead
		var size, pos int64
		err := row.Scan(&size, &d.KeyFingerprint, &d.Reason, &d.DisownedBy, &d.DisownedAt, &pos)
		d.Size, d.EventPosition, d.DisownedAt = uint64(size), uint64(pos), d.DisownedAt.UTC()
		return d, err
	})
}

// HeadSigners counts the kept heads (disowned heads aside) by the note
// verifier key kept with them.
func (s *Store) HeadSigners(ctx context.Context) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT verifier_key, count(*) FROM `+ownHeads+` GROUP BY verifier_key`)
	if err != nil {
		return nil, fmt.Errorf("counting the signed heads by key: %w", err)
	}
	out := map[string]int64{}
	var vk string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&vk, &n}, func() error { out[vk] = n; return nil }); err != nil {
		return nil, fmt.Errorf("counting the signed heads by key: %w", err)
	}
	return out, nil
}
