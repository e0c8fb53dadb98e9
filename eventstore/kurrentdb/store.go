package kurrentdb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/eventstore"
)

// Config configures a Store. It is a plain value: copy it freely; New reads
// it once.
type Config struct {
	// URL is the KurrentDB connection string, for example
	// esdb://127.0.0.1:2113?tls=false. Required.
	URL string
	// CallTimeout bounds every call to the server when the caller's context
	// has no deadline of its own. For AppendBulk it bounds each append.
	// Default 30s. WaitForEvents and Subscribe block until their context
	// ends and are not bounded by it.
	CallTimeout time.Duration
	// PollInterval is the safety re-check of the log head while waiting for
	// events, in case the live subscription missed one. Default 2s.
	PollInterval time.Duration
	// DuplicateWindow is how many events before an append's own a retry
	// looks through for its event ids when it cannot know their place
	// (expectation Any or StreamExists). Default 100.
	DuplicateWindow int
	// Logger receives the store's warnings (a lost live subscription, a
	// failed head poll) and, at debug level, the client's own log lines.
	// Default: discard.
	Logger *slog.Logger
}

func (c *Config) defaults() {
	if c.CallTimeout == 0 {
		c.CallTimeout = 30 * time.Second
	}
	if c.PollInterval == 0 {
		c.PollInterval = 2 * time.Second
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = 100
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports what is wrong with the configuration (after defaults).
func (c Config) Validate() error {
	var errs []error
	if c.URL == "" {
		errs = append(errs, errors.New("URL is required (esdb://host:2113?tls=false)"))
	} else if _, err := esdb.ParseConnectionString(c.URL); err != nil {
		errs = append(errs, fmt.Errorf("URL: %w", err))
	}
	if c.CallTimeout < 0 {
		errs = append(errs, errors.New("CallTimeout must not be negative"))
	}
	if c.PollInterval < 0 {
		errs = append(errs, errors.New("PollInterval must not be negative"))
	}
	if c.DuplicateWindow < 0 {
		errs = append(errs, errors.New("DuplicateWindow must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kurrentdb event store config: %w", err)
	}
	return nil
}

// Store is the KurrentDB event store. Safe for concurrent use.
type Store struct {
	cfg    Config
	conn   *conn
	notify *notifier

	closeOnce sync.Once
	closeErr  error
}

var _ eventstore.Store = (*Store)(nil)

// New returns a Store, safe for concurrent use, for the server at cfg.URL.
// It does not dial: the client connects on first use and keeps reconnecting
// while the server is away (calls meanwhile fail when their deadline ends).
// Close releases it.
func New(cfg Config) (*Store, error) {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	conf, err := esdb.ParseConnectionString(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("kurrentdb event store: parsing URL: %w", err)
	}
	conf.Logger = clientLogger(cfg.Logger)
	c, err := newConn(conf, cfg.Logger)
	if err != nil {
		return nil, err
	}
	s := &Store{cfg: cfg, conn: c}
	s.notify = newNotifier(c, cfg.Logger)
	return s, nil
}

// Close stops the live subscription and closes the client once the calls in
// flight have finished (waiting at most a few seconds); later calls return
// an error. Safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.notify.close()
		s.closeErr = s.conn.close()
	})
	return s.closeErr
}

// WaitForEvents blocks until the log holds a non-system event after
// `after`, or ctx ends (returning ctx.Err()).
func (s *Store) WaitForEvents(ctx context.Context, after uint64) error {
	return s.notify.wait(ctx, after, s.cfg.PollInterval, s.Head)
}

// Subscribe is a catch-up subscription over the whole log, built on ReadAll
// and WaitForEvents.
func (s *Store) Subscribe(ctx context.Context, after uint64, handle eventstore.Handler) error {
	return eventstore.CatchUp(ctx, s, after, eventstore.DefaultBatch, handle)
}

// callCtx bounds one call by CallTimeout unless ctx already has a deadline.
func (s *Store) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.cfg.CallTimeout)
}

// callErr wraps a failed call with what was being done, keeps ctx's error
// matchable when ctx ended, and marks "no answer in time" and connectivity
// failures with domain.ErrUnavailable.
func callErr(ctx context.Context, what string, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w: no answer from KurrentDB in time: %w", what, domain.ErrUnavailable, err)
	case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
		return fmt.Errorf("%s: %w: %w", what, ctx.Err(), translate(err))
	}
	return fmt.Errorf("%s: %w", what, translate(err))
}

// validate checks an append before it goes to the server: what every
// store checks (Append.Validate), and that no name starts with $, which
// belongs to KurrentDB.
func validate(a eventstore.Append) error {
	if err := a.Validate(true); err != nil {
		return err
	}
	if strings.HasPrefix(a.StreamID, "$") {
		return fmt.Errorf("append to %s: stream ids starting with $ belong to KurrentDB", a.StreamID)
	}
	for i, e := range a.Events {
		if strings.HasPrefix(e.Type, "$") {
			return fmt.Errorf("append to %s: event %d: types starting with $ belong to KurrentDB", a.StreamID, i)
		}
	}
	return nil
}
