package projections

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Checkpoint is how far one projection (or fan-out forwarder, named
// "fanout:…") has applied the log.
type Checkpoint struct {
	Name      string    `json:"name"`
	Position  int64     `json:"position"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Checkpoints lists every checkpoint. Safe for concurrent use.
func Checkpoints(ctx context.Context, pool *pgxpool.Pool) ([]Checkpoint, error) {
	rows, err := pool.Query(ctx, `SELECT name, position, updated_at FROM projection_checkpoints ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("reading checkpoints: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Checkpoint, error) {
		var c Checkpoint
		err := r.Scan(&c.Name, &c.Position, &c.UpdatedAt)
		c.UpdatedAt = c.UpdatedAt.UTC()
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading checkpoints: %w", err)
	}
	return out, nil
}
