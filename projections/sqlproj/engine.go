package sqlproj

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/catalog"
)

// Config configures an Engine.
type Config struct {
	// StatementTimeout bounds each call into a projection's SQL: one
	// batch of events, one DDL statement, one query. Default 60s.
	StatementTimeout time.Duration
	// TempFileLimit bounds the temporary files one session of a
	// projection's role may write at once (sorts, hashes that spill to
	// disk), in bytes; PostgreSQL cancels a statement past that. It is
	// set on the role (ALTER ROLE … IN DATABASE … SET temp_file_limit), a
	// superuser's setting the role cannot change. Default 256 MiB.
	TempFileLimit int64
	// WorkMem is the memory one sort or hash of a call may use before it
	// spills to disk, in bytes (PostgreSQL's work_mem, set on the role
	// and for each call). Default 16 MiB.
	WorkMem int64
	// MaxBytes bounds a projection's tables (the sum of
	// pg_total_relation_size over its schema), measured after every batch
	// and every DDL statement; past it the batch (or the DDL) rolls back
	// and the projection stops (DiskLimitError). Default 1 GiB.
	MaxBytes int64
	Logger   *slog.Logger
}

func (c *Config) defaults() {
	if c.StatementTimeout <= 0 {
		c.StatementTimeout = 60 * time.Second
	}
	if c.TempFileLimit <= 0 {
		c.TempFileLimit = 256 << 20
	}
	if c.WorkMem <= 0 {
		c.WorkMem = 16 << 20
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = 1 << 30
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Engine runs analysts' SQL projections on one database: it parses and
// checks definitions, makes the projections a projections.Runner keeps,
// queries them and drops them. Safe for concurrent use.
type Engine struct {
	// pool is arr's own: it runs no analyst SQL (session.go).
	pool  *pgxpool.Pool
	dbOID uint32
	cfg   Config
	reg   *domain.Registry

	keyMu sync.Mutex
	key   []byte // roleKey

	slotsMu sync.Mutex
	slots   map[string]chan struct{} // slot
}

// Open returns an Engine on the database of pool, arr's own pool, which
// runs no analyst SQL: that runs in sessions that log in as each
// projection's role (session.go). Close it when done.
func Open(ctx context.Context, pool *pgxpool.Pool, cfg Config) (*Engine, error) {
	if pool == nil {
		return nil, errors.New("sqlproj: nil pool")
	}
	cfg.defaults()
	e := &Engine{pool: pool, cfg: cfg, reg: catalog.Registry(), slots: map[string]chan struct{}{}}
	if err := pool.QueryRow(ctx, `SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database()`).Scan(&e.dbOID); err != nil {
		return nil, fmt.Errorf("sqlproj: reading the database's oid: %w", err)
	}
	return e, nil
}

// Close releases the engine (the pool Open was given stays open).
func (e *Engine) Close() {}

// Parse parses a definition file against the event types of this build.
func (e *Engine) Parse(file, src string) (*Definition, error) {
	return Parse(file, src, e.reg.Known)
}

// Role is the PostgreSQL role projection name's SQL runs as.
func (e *Engine) Role(name string) string { return roleName(e.dbOID, name) }

func (e *Engine) guard(name string) *guard {
	return &guard{name: name, role: e.Role(name), timeout: e.cfg.StatementTimeout, limits: e.limits(), maxBytes: e.cfg.MaxBytes, parked: true}
}

// limits are the resources one call may use, in kB as PostgreSQL counts.
func (e *Engine) limits() limits {
	return limits{tempFileKB: max(1, e.cfg.TempFileLimit>>10), workMemKB: max(64, e.cfg.WorkMem>>10)}
}

// asRole runs fn in a transaction of a session that logs in as role.
func (e *Engine) asRole(ctx context.Context, role string, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	tx, err := e.begin(ctx, role, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// DefinitionName parses a definition file and returns its projection's
// name (commands.SQLProjectionChecker).
func (e *Engine) DefinitionName(file, sql string) (string, error) {
	d, err := e.Parse(file, sql)
	if err != nil {
		return "", err
	}
	return d.Name, nil
}

// CheckDefinition parses and checks a definition file (see Check).
func (e *Engine) CheckDefinition(ctx context.Context, file, sql string) error {
	d, err := e.Parse(file, sql)
	if err != nil {
		return err
	}
	return e.Check(ctx, d)
}
