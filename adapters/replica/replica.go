package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain/wait"
)

// Defaults of Config.
const (
	DefaultMaxLag = 10 * time.Second
	DefaultCheck  = time.Second
)

// Config configures a Router.
type Config struct {
	// Primary and Replica are the two pools; required.
	Primary, Replica *pgxpool.Pool
	// MaxLag: a replica further behind is not read. Default DefaultMaxLag.
	MaxLag time.Duration
	// Check is how often the lag is measured. Default DefaultCheck.
	Check time.Duration
	// Logger; default slog.Default.
	Logger *slog.Logger
}

// The states of the replica, in Health.
const (
	StateOK      = "ok"
	StateLagging = "lagging"
	StateDown    = "down"
	// StateNotInRecovery: the replica answers but is not replaying (it
	// was promoted, or is not a replica).
	StateNotInRecovery = "not_in_recovery"
	// StateStarting: not measured yet.
	StateStarting = "starting"
)

// Where reads go, in Health.Reads.
const (
	ReadsReplica = "replica"
	ReadsPrimary = "primary"
)

// Health is the replica's state as /healthz reports it (cmd/arr hands it
// to the services as projections.ReplicaHealth).
type Health struct {
	// State is one of the State constants.
	State string
	// Reads is ReadsReplica or ReadsPrimary: where reads go now.
	Reads string
	// LagSeconds is how far the replica is behind the primary;
	// MaxLagSeconds the most it may be and still be read.
	LagSeconds, MaxLagSeconds float64
	// ReplayLSN is the replica's replay position and PrimaryLSN the
	// primary's WAL position at the last check, in bytes.
	ReplayLSN, PrimaryLSN int64
	CheckedAt             time.Time
	Error                 string
}

// sample is the primary's WAL position at a time.
type sample struct {
	at  time.Time
	lsn int64
}

// Router routes reads. Safe for concurrent use.
type Router struct {
	cfg Config
	mu  sync.Mutex
	h   Health
	// samples are the primary's positions of the last MaxLag or so.
	samples []sample
	// need is a position the replica must have replayed to be read
	// (read-your-writes that AwaitReplay could not wait for).
	need int64
}

// New returns a Router; it reads the primary until its first check.
func New(cfg Config) (*Router, error) {
	if cfg.Primary == nil || cfg.Replica == nil {
		return nil, errors.New("replica: nil pool")
	}
	if cfg.MaxLag <= 0 {
		cfg.MaxLag = DefaultMaxLag
	}
	if cfg.Check <= 0 {
		cfg.Check = DefaultCheck
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Router{cfg: cfg, h: Health{State: StateStarting, Reads: ReadsPrimary, MaxLagSeconds: cfg.MaxLag.Seconds()}}, nil
}

// Run measures the lag every Check until ctx ends.
func (r *Router) Run(ctx context.Context) error {
	t := time.NewTicker(r.cfg.Check)
	defer t.Stop()
	for {
		r.check(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Health returns the replica's state at the last check.
func (r *Router) Health() Health {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.h
}

const (
	primaryLSNSQL = `SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint`
	replayLSNSQL  = `SELECT pg_is_in_recovery(), coalesce((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint, 0)`
)

// check measures the primary's position and the replica's replay.
func (r *Router) check(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	now := time.Now()
	var primary int64
	perr := r.cfg.Primary.QueryRow(ctx, primaryLSNSQL).Scan(&primary)
	var recovering bool
	var replay int64
	rerr := r.cfg.Replica.QueryRow(ctx, replayLSNSQL).Scan(&recovering, &replay)
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := r.h.State
	if perr == nil {
		r.samples = append(r.samples, sample{now, primary})
		// Keep what measures up to twice MaxLag.
		for len(r.samples) > 1 && now.Sub(r.samples[1].at) > 2*r.cfg.MaxLag {
			r.samples = r.samples[1:]
		}
		r.h.PrimaryLSN = primary
	}
	r.h.CheckedAt, r.h.Error = now.UTC(), ""
	switch {
	case rerr != nil:
		r.h.State, r.h.Error = StateDown, rerr.Error()
	case !recovering:
		r.h.State = StateNotInRecovery
	default:
		r.h.ReplayLSN = replay
		r.h.LagSeconds = r.lag(now, replay).Seconds()
		r.h.State = StateOK
		if r.h.LagSeconds > r.cfg.MaxLag.Seconds() {
			r.h.State = StateLagging
		}
	}
	r.h.Reads = ReadsPrimary
	if r.usable() {
		r.h.Reads = ReadsReplica
	}
	if r.h.State != prev {
		r.cfg.Logger.Info("read replica", "status", r.h.State, "reads", r.h.Reads, "lag_seconds", r.h.LagSeconds, "err", r.h.Error)
	}
}

// lag is how long ago the primary was last at or before replay: the age
// of the oldest sample past it (0 when the replica is past the newest).
func (r *Router) lag(now time.Time, replay int64) time.Duration {
	for _, s := range r.samples {
		if s.lsn > replay {
			return now.Sub(s.at)
		}
	}
	return 0
}

// usable says whether reads may go to the replica (r.mu held).
func (r *Router) usable() bool {
	return r.h.State == StateOK && r.h.ReplayLSN >= r.need
}

// db is where a read goes now.
func (r *Router) db() (*pgxpool.Pool, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.usable() {
		return r.cfg.Replica, true
	}
	return r.cfg.Primary, false
}

// down marks the replica down after a failed connection.
func (r *Router) down(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.h.State != StateDown {
		r.cfg.Logger.Warn("read replica unreachable: reading the primary", "err", err)
		// Its idle connections are as dead as the one that failed.
		go r.cfg.Replica.Reset()
	}
	r.h.State, r.h.Reads, r.h.Error = StateDown, ReadsPrimary, err.Error()
}

// AwaitReplay gives read-your-writes after a command: it waits until the
// replica has replayed past the primary's current WAL position, or until
// ctx ends; then, if the replica is not there, reads go to the primary
// until it is. It fails only when the primary cannot be asked.
func (r *Router) AwaitReplay(ctx context.Context) error {
	var target int64
	if err := r.cfg.Primary.QueryRow(ctx, primaryLSNSQL).Scan(&target); err != nil {
		return fmt.Errorf("read-your-writes: the primary's WAL position: %w", err)
	}
	for {
		var recovering bool
		var replay int64
		err := r.cfg.Replica.QueryRow(ctx, replayLSNSQL).Scan(&recovering, &replay)
		if err == nil && recovering && replay >= target {
			r.mu.Lock()
			r.h.ReplayLSN = max(r.h.ReplayLSN, replay)
			r.mu.Unlock()
			return nil
		}
		if !wait.Sleep(ctx, 10*time.Millisecond) {
			r.mu.Lock()
			r.need = max(r.need, target)
			r.mu.Unlock()
			return nil
		}
	}
}

// Query runs a query (the read side's Query). A replica query that fails for want
// of the replica, before its first row, is run again on the primary.
func (r *Router) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	p, replica := r.db()
	rows, err := p.Query(ctx, sql, args...)
	if !replica {
		return rows, err
	}
	if err != nil {
		if !unreachable(ctx, err) {
			return nil, err
		}
		r.down(err)
		return r.cfg.Primary.Query(ctx, sql, args...)
	}
	return &retryRows{Rows: rows, again: func(err error) (pgx.Rows, error) {
		if !unreachable(ctx, err) {
			return nil, err
		}
		r.down(err)
		return r.cfg.Primary.Query(ctx, sql, args...)
	}}, nil
}

// retryRows are a replica query's rows: when the first Next finds the
// connection broken, the query runs again on the primary (again).
type retryRows struct {
	pgx.Rows
	again   func(error) (pgx.Rows, error)
	started bool
	err     error
}

func (r *retryRows) Next() bool {
	if r.err != nil {
		return false
	}
	if r.started {
		return r.Rows.Next()
	}
	r.started = true
	if r.Rows.Next() {
		return true
	}
	err := r.Rows.Err()
	if err == nil {
		return false
	}
	r.Rows.Close()
	rows, err := r.again(err)
	if err != nil {
		r.err = err
		return false
	}
	r.Rows = rows
	return r.Rows.Next()
}

func (r *retryRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.Rows.Err()
}

// QueryRow runs a one-row query.
func (r *Router) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := r.Query(ctx, sql, args...)
	return row{rows: rows, err: err}
}

// SendBatch sends a batch.
func (r *Router) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	p, _ := r.db()
	return p.SendBatch(ctx, b)
}

// BeginTx begins a transaction.
func (r *Router) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	p, replica := r.db()
	tx, err := p.BeginTx(ctx, opts)
	if err != nil && replica && unreachable(ctx, err) {
		r.down(err)
		return r.cfg.Primary.BeginTx(ctx, opts)
	}
	return tx, err
}

// unreachable says whether err is the replica not answering, rather than
// the query's own failure: no connection, a connection that broke, or the
// server shutting down or refusing connections (SQLSTATE classes 08, 57).
func unreachable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var pgErr interface{ SQLState() string }
	if !errors.As(err, &pgErr) {
		return true
	}
	state := pgErr.SQLState()
	return strings.HasPrefix(state, "08") || strings.HasPrefix(state, "57")
}

// row is a pgx.Row over Rows.
type row struct {
	rows pgx.Rows
	err  error
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}
