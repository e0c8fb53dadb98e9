package sqlproj

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	// MaxConns bounds the connections SQL projections' transactions use
	// at once. Default 4.
	MaxConns int32
	// TempFileLimit bounds the temporary files one call may write (sorts,
	// hashes that spill to disk), in bytes; PostgreSQL cancels it past
	// that. The role cannot raise it (temp_file_limit is a superuser's
	// setting). Default 256 MiB.
	TempFileLimit int64
	// WorkMem is the memory one sort or hash of a call may use before it
	// spills to disk, in bytes (PostgreSQL's work_mem, set for each call).
	// Default 16 MiB.
	WorkMem int64
	Logger  *slog.Logger
}

func (c *Config) defaults() {
	if c.StatementTimeout <= 0 {
		c.StatementTimeout = 60 * time.Second
	}
	if c.MaxConns <= 0 {
		c.MaxConns = 4
	}
	if c.TempFileLimit <= 0 {
		c.TempFileLimit = 256 << 20
	}
	if c.WorkMem <= 0 {
		c.WorkMem = 16 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Engine runs analysts' SQL projections on one database: it parses and
// checks definitions, makes the projections a projections.Runner keeps,
// queries them and drops them. Safe for concurrent use.
type Engine struct {
	pool *pgxpool.Pool
	// tx is the pool of the projections' transactions: each connection
	// serves one transaction, with no named prepared statements.
	tx    *pgxpool.Pool
	dbOID uint32
	cfg   Config
	reg   *domain.Registry
}

// Open returns an Engine on the database of pool (arr's own pool, which it
// uses for reads that run no analyst SQL). Close it when done.
func Open(ctx context.Context, pool *pgxpool.Pool, cfg Config) (*Engine, error) {
	if pool == nil {
		return nil, errors.New("sqlproj: nil pool")
	}
	cfg.defaults()
	e := &Engine{pool: pool, cfg: cfg, reg: catalog.Registry()}
	if err := pool.QueryRow(ctx, `SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database()`).Scan(&e.dbOID); err != nil {
		return nil, fmt.Errorf("sqlproj: reading the database's oid: %w", err)
	}
	pc := pool.Config()
	pc.MaxConns, pc.MinConns = cfg.MaxConns, 0
	pc.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeDescribeExec
	pc.ConnConfig.RuntimeParams["default_transaction_isolation"] = "read committed"
	pc.ConnConfig.RuntimeParams["application_name"] = "arr-sqlproj"
	pc.AfterRelease = func(*pgx.Conn) bool { return false } // one transaction per connection
	pc.BeforeAcquire, pc.PrepareConn, pc.AfterConnect = nil, nil, nil
	tx, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("sqlproj: %w", err)
	}
	e.tx = tx
	return e, nil
}

// Close closes the engine's pool (not the one Open was given).
func (e *Engine) Close() { e.tx.Close() }

// Parse parses a definition file against the event types of this build.
func (e *Engine) Parse(file, src string) (*Definition, error) {
	return Parse(file, src, e.reg.Known)
}

// Role is the PostgreSQL role projection name's SQL runs as.
func (e *Engine) Role(name string) string { return roleName(e.dbOID, name) }

func (e *Engine) guard(name string) *guard {
	return &guard{name: name, role: e.Role(name), timeout: e.cfg.StatementTimeout, limits: e.limits()}
}

// limits are the resources one call may use, in kB as PostgreSQL counts.
func (e *Engine) limits() limits {
	return limits{tempFileKB: max(1, e.cfg.TempFileLimit>>10), workMemKB: max(64, e.cfg.WorkMem>>10)}
}

// inTx runs fn in a transaction of the engine's pool.
func (e *Engine) inTx(ctx context.Context, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	tx, err := e.tx.BeginTx(ctx, opts)
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
