package metering

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/arr-dev/arr/domain/wait"
	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/usage"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// Recorder appends usage counts; *commands.CountCallsHandler is one.
type Recorder interface {
	Handle(ctx context.Context, c commands.CountCalls) (uint64, error)
}

// Config configures a Meter.
type Config struct {
	// Workers is how many appends run at once. Default 4.
	Workers int
	// MaxAttempts is how often one count is tried before it is given up
	// (and logged at error). Default 8.
	MaxAttempts int
	// RetryDelay is the wait before the first retry; it doubles per
	// attempt, up to 30 s. Default 250 ms.
	RetryDelay time.Duration
	// AppendTimeout bounds one append. Default 10 s.
	AppendTimeout time.Duration
	// DrainTimeout bounds the last flush when Run stops. Default 10 s.
	DrainTimeout time.Duration
	// MinInterval is the least time between two flushes, so counts of
	// requests arriving one by one are appended together rather than one
	// append (and one commit) per request. Default 200 ms; negative: none.
	MinInterval time.Duration
	// Now is the clock that picks a request's UTC day. Default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Validate fills in defaults and checks the values.
func (c *Config) Validate() error {
	if c.Workers == 0 {
		c.Workers = 4
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 8
	}
	if c.RetryDelay == 0 {
		c.RetryDelay = 250 * time.Millisecond
	}
	if c.AppendTimeout == 0 {
		c.AppendTimeout = 10 * time.Second
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = 10 * time.Second
	}
	if c.MinInterval == 0 {
		c.MinInterval = 200 * time.Millisecond
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	var errs []error
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("metering: Workers must be at least 1, not %d", c.Workers))
	}
	if c.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("metering: MaxAttempts must be at least 1, not %d", c.MaxAttempts))
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"RetryDelay", c.RetryDelay}, {"AppendTimeout", c.AppendTimeout}, {"DrainTimeout", c.DrainTimeout}, {"MinInterval", c.MinInterval}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("metering: %s is negative (%s)", f.name, f.v))
		}
	}
	return errors.Join(errs...)
}

type slot struct {
	account, key uuid.UUID
	service      account.Service
	day          string
}

// batch is one CountCalls and how often it was tried.
type batch struct {
	cmd      commands.CountCalls
	attempts int
	due      time.Time
}

// Meter counts admitted, served requests and appends them as usage events.
type Meter struct {
	rec Recorder
	cfg Config

	mu      sync.Mutex
	pending map[slot]int64
	retries []batch
	wake    chan struct{}
}

// New returns a Meter appending through rec. Nothing is appended until Run.
func New(rec Recorder, cfg Config) (*Meter, error) {
	if rec == nil {
		return nil, errors.New("metering: nil recorder")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Meter{rec: rec, cfg: cfg, pending: map[slot]int64{}, wake: make(chan struct{}, 1)}, nil
}

// Count counts one admitted request of p's key at time at. It never blocks
// on I/O.
func (m *Meter) Count(p identity.Principal, at time.Time) {
	s := slot{account: p.AccountID, key: p.KeyID, service: p.Service, day: usage.Day(at)}
	m.mu.Lock()
	m.pending[s]++
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// Middleware counts every request that reaches it and is served (place it
// after the quota, so only admitted requests count): once the handler has
// answered, a response whose status ratelimit.Served refuses (a 400, 403,
// 404, ...) is not counted, as the quota gives it back. The request is
// counted on the UTC day it arrived. It counts in a deferred call, so an
// answer the handler cuts off by panicking (http.ErrAbortHandler, as a
// failed export does once its first byte is sent) is counted too, by the
// status it was sent with, and the panic goes on; a handler that panics
// before it sent anything served nothing, and is not counted. A nil
// *Meter counts nothing.
func (m *Meter) Middleware(principal func(*gin.Context) (identity.Principal, bool)) gin.HandlerFunc {
	if m == nil {
		return func(c *gin.Context) { c.Next() }
	}
	return func(c *gin.Context) {
		at := m.cfg.Now()
		returned := false
		defer func() {
			if !returned && !c.Writer.Written() {
				return
			}
			if p, ok := principal(c); ok && ratelimit.ServedRequest(c) {
				m.Count(p, at)
			}
		}()
		c.Next()
		returned = true
	}
}

// Run appends counts as they come (at most one flush per MinInterval)
// until ctx ends, then makes a last
// bounded flush of everything still held. It returns nil.
func (m *Meter) Run(ctx context.Context) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var retry <-chan time.Time
		if due, ok := m.nextDue(); ok {
			timer.Reset(max(time.Until(due), 0))
			retry = timer.C
		}
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.Background(), m.cfg.DrainTimeout)
			m.flush(dctx, true)
			cancel()
			return nil
		case <-m.wake:
		case <-retry:
		}
		m.flush(ctx, false)
		if m.cfg.MinInterval > 0 {
			wait.Sleep(ctx, m.cfg.MinInterval)
		}
	}
}

// Flush appends everything counted so far, retries included, and reports
// whether all of it was appended. For tests and shutdown.
func (m *Meter) Flush(ctx context.Context) error {
	if left := m.flush(ctx, true); left > 0 {
		return errors.New("metering: some counts could not be appended")
	}
	return nil
}

func (m *Meter) nextDue() (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var due time.Time
	for i, b := range m.retries {
		if i == 0 || b.due.Before(due) {
			due = b.due
		}
	}
	return due, len(m.retries) > 0
}

// take empties the pending counts into commands, one per account and day,
// and adds the retries that are due (all of them when final).
func (m *Meter) take(final bool) []batch {
	m.mu.Lock()
	pending := m.pending
	m.pending = map[slot]int64{}
	var out, keep []batch
	now := time.Now()
	for _, b := range m.retries {
		if final || !b.due.After(now) {
			out = append(out, b)
		} else {
			keep = append(keep, b)
		}
	}
	m.retries = keep
	m.mu.Unlock()

	type stream struct {
		account uuid.UUID
		day     string
	}
	byStream := map[stream]int{}
	for s, n := range pending {
		k := stream{s.account, s.day}
		i, ok := byStream[k]
		if !ok {
			i = len(out)
			byStream[k] = i
			out = append(out, batch{cmd: commands.CountCalls{AccountID: s.account, Day: s.day}})
		}
		out[i].cmd.Keys = append(out[i].cmd.Keys, commands.KeyCalls{EventID: newEventID(), KeyID: s.key, Service: s.service, Calls: n})
	}
	return out
}

func newEventID() uuid.UUID {
	if id, err := uuid.NewV7(); err == nil {
		return id
	}
	return uuid.New()
}

// flush appends one round of batches with bounded parallelism and returns
// how many batches are left over (queued for retry, or dropped when final
// and out of attempts).
func (m *Meter) flush(ctx context.Context, final bool) int {
	batches := m.take(final)
	if len(batches) == 0 {
		return 0
	}
	sem := make(chan struct{}, m.cfg.Workers)
	var wg sync.WaitGroup
	var mu sync.Mutex
	left := 0
	for _, b := range batches {
		sem <- struct{}{}
		wg.Add(1)
		go func(b batch) {
			defer func() { <-sem; wg.Done() }()
			// An append under way finishes even if Run is stopping; the
			// last flush runs under the drain bound instead.
			base := ctx
			if !final {
				base = context.WithoutCancel(ctx)
			}
			actx, cancel := context.WithTimeout(base, m.cfg.AppendTimeout)
			_, err := m.rec.Handle(actx, b.cmd)
			cancel()
			if err == nil {
				return
			}
			mu.Lock()
			left++
			mu.Unlock()
			m.failed(b, err, final)
		}(b)
	}
	wg.Wait()
	return left
}

func (m *Meter) failed(b batch, err error, final bool) {
	b.attempts++
	if final || b.attempts >= m.cfg.MaxAttempts {
		for _, k := range b.cmd.Keys {
			m.cfg.Logger.Error("usage count lost: could not append it to the event log", "account_id", b.cmd.AccountID,
				"key_id", k.KeyID, "service", k.Service, "day", b.cmd.Day, "calls", k.Calls, "attempts", b.attempts, "err", err)
		}
		return
	}
	delay := m.cfg.RetryDelay << (b.attempts - 1)
	if delay > 30*time.Second || delay <= 0 {
		delay = 30 * time.Second
	}
	b.due = time.Now().Add(delay)
	m.cfg.Logger.Warn("appending usage counts failed; will retry", "account_id", b.cmd.AccountID, "day", b.cmd.Day,
		"keys", len(b.cmd.Keys), "attempt", b.attempts, "retry_in", delay, "err", err)
	m.mu.Lock()
	m.retries = append(m.retries, b)
	m.mu.Unlock()
}
