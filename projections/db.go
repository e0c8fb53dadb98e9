package projections

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// DB is what the read models' queries use of a database: a
// *pgxpool.Pool is one, and so is a replica router that sends reads to a
// streaming replica (adapters/replica).
type DB interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error)
}

// ReplicaHealth is the state of the streaming replica the read models are
// read from (ARR_READ_DATABASE_URL, adapters/replica), as /healthz
// reports it.
type ReplicaHealth struct {
	// State is ok, lagging, down, not_in_recovery or starting.
	State string `json:"status"`
	// Reads says where reads go now: "replica" or "primary".
	Reads string `json:"reads"`
	// LagSeconds is how far the replica is behind the primary.
	LagSeconds float64 `json:"lag_seconds"`
	// MaxLagSeconds is the most it may be behind and still be read.
	MaxLagSeconds float64 `json:"max_lag_seconds"`
	// ReplayLSN is the replica's replay position and PrimaryLSN the
	// primary's WAL position at the last check, in bytes.
	ReplayLSN  int64     `json:"replay_lsn"`
	PrimaryLSN int64     `json:"primary_lsn"`
	CheckedAt  time.Time `json:"checked_at"`
	Error      string    `json:"error,omitempty"`
}
