package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/eventstore"
)

// channel is the NOTIFY channel a commit announces its new head on.
const channel = "arr_events"

// DefaultHeadIdle is Config.HeadIdle's default: how long at most a writer
// frozen while it holds the log head stalls the other writers.
const DefaultHeadIdle = 3 * time.Second

// Config configures a Store.
type Config struct {
	// MaxBatchEvents caps the events one group commit carries. Default 4096.
	MaxBatchEvents int
	// CommitTimeout bounds one group-commit transaction. Default 30s.
	CommitTimeout time.Duration
	// PollInterval is the safety re-check of the head while waiting for
	// events, in case a notification was lost. Default 2s.
	PollInterval time.Duration
	// HeadIdle bounds how long an append transaction may sit idle while it
	// holds the log head's lock, which orders every writer of every
	// process: each such transaction sets idle_in_transaction_session_timeout
	// to it in its first statement, so the server ends the transaction of
	// a writer frozen between its round trips (SIGSTOP, a VM paused) after
	// HeadIdle and the other writers go on; the frozen writer's COMMIT then
	// fails and nothing of it is written. It must exceed any legitimate
	// pause of a live writer between its statements (planning a batch,
	// hashing its leaves, a BeforeCommit hook). Default 3s.
	HeadIdle time.Duration
	// BeforeCommit, if set, runs inside every append transaction just before
	// COMMIT; an error rolls the transaction back. It exists for fault
	// injection in tests (hold a transaction open, abort one).
	BeforeCommit func(ctx context.Context, events int) error
	Logger       *slog.Logger
}

// Validate fills in the defaults of the settings left zero and reports
// every setting that is out of range at once.
func (c *Config) Validate() error {
	var errs []error
	if c.MaxBatchEvents < 0 {
		errs = append(errs, fmt.Errorf("postgres event store: MaxBatchEvents is negative (%d)", c.MaxBatchEvents))
	}
	if c.CommitTimeout < 0 {
		errs = append(errs, fmt.Errorf("postgres event store: CommitTimeout is negative (%s)", c.CommitTimeout))
	}
	if c.HeadIdle < 0 {
		errs = append(errs, fmt.Errorf("postgres event store: HeadIdle is negative (%s)", c.HeadIdle))
	}
	if c.PollInterval < 0 {
		errs = append(errs, fmt.Errorf("postgres event store: PollInterval is negative (%s)", c.PollInterval))
	}
	if c.MaxBatchEvents == 0 {
		c.MaxBatchEvents = 4096
	}
	if c.CommitTimeout == 0 {
		c.CommitTimeout = 30 * time.Second
	}
	if c.PollInterval == 0 {
		c.PollInterval = 2 * time.Second
	}
	if c.HeadIdle == 0 {
		c.HeadIdle = DefaultHeadIdle
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return errors.Join(errs...)
}

// Store is the PostgreSQL event store. Safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	cfg    Config
	queue  chan *request
	stop   chan struct{}
	done   chan struct{}
	notify *notifier
	// commits is the context of the writer's commits and inflight the
	// connection of the one in flight; Abort cancels both.
	commits  context.Context
	abort    context.CancelFunc
	inflight atomic.Pointer[pgconn.PgConn]
	// cache is the writer's belief about the head (see commitOptimistic).
	cache headCache
	// headIdle is cfg.HeadIdle in milliseconds, as set_config takes it.
	headIdle string

	closeOnce sync.Once
}

var (
	_ eventstore.Store      = (*Store)(nil)
	_ eventstore.TypeReader = (*Store)(nil)
)

// New returns a Store on pool (whose schema must be migrated) and starts its
// writer. Close stops it; the pool stays the caller's.
func New(pool *pgxpool.Pool, cfg Config) (*Store, error) {
	if pool == nil {
		return nil, errors.New("postgres event store: nil pool")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Store{
		pool:  pool,
		cfg:   cfg,
		queue: make(chan *request, 4*cfg.MaxBatchEvents),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),

		headIdle: strconv.FormatInt(cfg.HeadIdle.Milliseconds(), 10),
	}
	s.notify = newNotifier(pool, cfg.Logger, s.Head)
	s.commits, s.abort = context.WithCancel(context.Background())
	go s.writer()
	return s, nil
}

// Close stops the writer after it finishes the batch in hand and stops the
// listener. Appends queued but not started fail with an error.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.done
		s.abort()
		s.notify.close()
	})
	return nil
}

// Abort stops the commit in flight, if any, at the server and closes the
// store: for a process whose shutdown grace period is over. It sends the
// server a cancel request for the commit's statement before it abandons
// the connection, so a commit waiting on a lock cannot complete after the
// process has gone (its appenders were told it may not have committed).
// Abort returns within wait.
func (s *Store) Abort(wait time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if c := s.inflight.Load(); c != nil {
		_ = c.CancelRequest(ctx) // best effort: the process is leaving either way
	}
	s.abort()
	done := make(chan struct{})
	go func() { _ = s.Close(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Head returns the position of the last committed event.
func (s *Store) Head(ctx context.Context) (uint64, error) { return ReadHead(ctx, s.pool) }

// ReadHead reads the head position of the log kept in db's database, as
// Store.Head does, on a pool of the caller's (cmd/arr reads /healthz's
// head on admission's own pool).
func ReadHead(ctx context.Context, db interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}) (uint64, error) {
	var head int64
	if err := db.QueryRow(ctx, `SELECT position FROM event_log_head`).Scan(&head); err != nil {
		return 0, fmt.Errorf("reading log head: %w", err)
	}
	return uint64(head), nil
}

// WaitForEvents blocks until the log's head passes `after` or ctx ends.
func (s *Store) WaitForEvents(ctx context.Context, after uint64) error {
	return s.notify.wait(ctx, after, s.cfg.PollInterval, s.Head)
}

// Subscribe is a catch-up subscription over the whole log.
func (s *Store) Subscribe(ctx context.Context, after uint64, handle eventstore.Handler) error {
	return eventstore.CatchUp(ctx, s, after, eventstore.DefaultBatch, handle)
}

func dataOrEmpty(d json.RawMessage) []byte {
	if len(d) == 0 {
		return []byte("{}")
	}
	return d
}
