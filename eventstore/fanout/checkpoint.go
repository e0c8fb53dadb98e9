package fanout

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// errCheckpointGone means the checkpoint row was deleted while the forwarder
// ran; continuing would silently lose track of what was published.
var errCheckpointGone = errors.New("checkpoint row no longer exists")

// checkpoint is the forwarder's row in projection_checkpoints.
type checkpoint struct {
	pool *pgxpool.Pool
	name string
}

// load returns the saved position, creating the row at 0 if missing.
func (c checkpoint) load(ctx context.Context) (uint64, error) {
	if _, err := c.pool.Exec(ctx,
		`INSERT INTO projection_checkpoints (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, c.name); err != nil {
		return 0, fmt.Errorf("creating checkpoint %s: %w", c.name, err)
	}
	var pos int64
	if err := c.pool.QueryRow(ctx,
		`SELECT position FROM projection_checkpoints WHERE name = $1`, c.name).Scan(&pos); err != nil {
		return 0, fmt.Errorf("reading checkpoint %s: %w", c.name, err)
	}
	if pos < 0 {
		return 0, fmt.Errorf("checkpoint %s: negative position %d", c.name, pos)
	}
	return uint64(pos), nil
}

// save records that everything up to pos has been published.
func (c checkpoint) save(ctx context.Context, pos uint64) error {
	tag, err := c.pool.Exec(ctx,
		`UPDATE projection_checkpoints SET position = $2, updated_at = now() WHERE name = $1`, c.name, int64(pos))
	if err != nil {
		return fmt.Errorf("saving checkpoint %s at %d: %w", c.name, pos, err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("saving checkpoint %s at %d: %w", c.name, pos, errCheckpointGone)
	}
	return nil
}
