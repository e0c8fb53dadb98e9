package projections

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/text"
	"github.com/arr-dev/arr/eventstore"
)

// The poison-event policy, as KurrentDB's parked messages and Marten's
// dead-letter events have it:
//
//   - A batch that fails is retried with a growing back-off. Each failure
//     is recorded in projection_faults (position, error, attempts), which
//     /healthz reports while the projection has not got past it.
//   - After Config.ParkAfter failed tries at the same checkpoint, the next
//     try applies the batch one event at a time, each under a savepoint.
//     An event that fails with an error about the data (not a lost
//     connection or a timeout) is parked: recorded in projection_parked
//     with its position and error, in the transaction that applies the
//     rest and advances the checkpoint. The projection moves on; its read
//     model lacks the parked events until `arr projections retry NAME`
//     applies them (after the newer events, so a projection whose rows
//     depend on order may need a rebuild instead; rebuild re-applies every
//     event in order and parks again only what still fails).
//   - A projection that fails closed (Spec.FailClosedChannel: identity, which decides
//     revocations and plans) never parks: it keeps retrying, and while
//     its fault is current every keyed request is refused with 503 rather
//     than authenticated from a read model that may miss a revocation.

// ParkedEvent is an event a projection could not apply.
type ParkedEvent struct {
	Projection string     `json:"projection"`
	Position   uint64     `json:"position"`
	EventID    string     `json:"event_id"`
	EventType  string     `json:"event_type"`
	Error      string     `json:"error"`
	Attempts   int        `json:"attempts"`
	ParkedAt   time.Time  `json:"parked_at"`
	RetriedAt  *time.Time `json:"retried_at,omitempty"`
}

// applyError is a failure of a projection's handlers (as opposed to reading
// the log or taking the checkpoint).
type applyError struct{ err error }

func (e *applyError) Error() string { return e.err.Error() }
func (e *applyError) Unwrap() error { return e.err }

// Transient reports whether err says nothing about the events being
// applied: the connection or the server failed (or ended the session),
// a lock or a timeout ran out, a transaction lost a serialization race.
// Such a batch is retried, never parked. Everything else (data exceptions, constraint violations,
// a payload that does not decode) is the events' fault.
func Transient(err error) bool {
	if errors.Is(err, ErrStopped) { // not the events' fault either: never parked
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code[:2] {
		case "08", // connection exception
			"40", // transaction rollback: serialization failure, deadlock
			"53", // insufficient resources
			"57", // operator intervention: shutdown, query canceled (statement timeout)
			"58", // system error
			"XX": // internal error
			return true
		}
		// Lock not available; a session ended idle in its transaction.
		return pgErr.Code == "55P03" || pgErr.Code == "25P03"
	}
	var netErr net.Error
	var connErr *pgconn.ConnectError
	return errors.As(err, &netErr) || errors.As(err, &connErr) || pgconn.Timeout(err) || pgconn.SafeToRetry(err)
}

// applyIsolated applies events one at a time, each under a savepoint of
// tx, and returns the ones that failed with an error that is not
// Transient; the others are applied. A transient failure ends it with
// that error (the batch is retried as a whole).
func applyIsolated(ctx context.Context, tx pgx.Tx, reg *domain.Registry, p *compiled, events []eventstore.Event) ([]ParkedEvent, error) {
	var parked []ParkedEvent
	for i := range events {
		sp, err := tx.Begin(ctx)
		if err != nil {
			return nil, fmt.Errorf("savepoint: %w", err)
		}
		err = apply(ctx, sp, reg, p, events[i:i+1])
		if err == nil {
			if err := sp.Commit(ctx); err != nil {
				return nil, fmt.Errorf("releasing savepoint: %w", err)
			}
			continue
		}
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			return nil, fmt.Errorf("rolling back to savepoint after %v: %w", err, rbErr)
		}
		if Transient(err) {
			return nil, err
		}
		e := events[i]
		parked = append(parked, ParkedEvent{Projection: p.Name, Position: e.Position, EventID: e.ID.String(), EventType: e.Type, Error: err.Error(), Attempts: 1})
	}
	return parked, nil
}

// insertParked records parked events in tx (an event parked again keeps
// one row, with its latest error).
func insertParked(ctx context.Context, tx pgx.Tx, parked []ParkedEvent) error {
	for _, pe := range parked {
		if _, err := tx.Exec(ctx, `INSERT INTO public.projection_parked (projection, position, event_id, event_type, error)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (projection, position) DO UPDATE SET error = EXCLUDED.error, parked_at = now(), cleared_at = NULL,
				attempts = CASE WHEN projection_parked.cleared_at IS NULL THEN projection_parked.attempts + 1 ELSE 1 END`,
			pe.Projection, int64(pe.Position), pe.EventID, pe.EventType, truncate(text.Clean(pe.Error), 2000)); err != nil {
			return fmt.Errorf("parking event %d: %w", pe.Position, err)
		}
	}
	return nil
}

// recordFault notes that p failed to get past checkpoint at, and for a
// projection that fails closed tells its caches to drop what they hold.
func (r *Runner) recordFault(p *compiled, at uint64, cause error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO projection_faults (projection, position, error) VALUES ($1, $2, $3)
		ON CONFLICT (projection) DO UPDATE SET
			attempts = CASE WHEN projection_faults.position = EXCLUDED.position THEN projection_faults.attempts + 1 ELSE 1 END,
			since = CASE WHEN projection_faults.position = EXCLUDED.position THEN projection_faults.since ELSE now() END,
			position = EXCLUDED.position, error = EXCLUDED.error, updated_at = now()`, p.Name, int64(at), truncate(text.Clean(cause.Error()), 2000))
	if p.FailClosedChannel != "" {
		b.Queue(`SELECT pg_notify($1, '')`, p.FailClosedChannel)
	}
	if err := r.pool.SendBatch(ctx, b).Close(); err != nil {
		r.cfg.Logger.Warn("recording projection fault", "projection", p.Name, "err", err)
	}
}

// clearFault drops name's fault row after a successful step. A row left
// behind (this fails) is cleared by the next step that finds it.
func (r *Runner) clearFault(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := r.pool.Exec(ctx, `DELETE FROM projection_faults WHERE projection = $1`, name); err != nil {
		r.cfg.Logger.Warn("clearing projection fault", "projection", name, "err", err)
	}
}

// failure is how often a projection failed in a row at one checkpoint.
type failure struct {
	at    uint64
	count int
}

// noteFailure counts a failed try at checkpoint at; it returns the count.
func (r *Runner) noteFailure(name string, at uint64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.failures[name]
	if f.at != at {
		f = failure{at: at}
	}
	f.count++
	r.failures[name] = f
	return f.count
}

// isolateNext reports whether the next try of name at checkpoint at should
// apply its batch event by event and park what fails.
func (r *Runner) isolateNext(p *compiled, at uint64) bool {
	if p.FailClosedChannel != "" {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.failures[p.Name]
	return ok && f.at == at && f.count >= r.cfg.ParkAfter
}

// noteSuccess forgets name's failures; it reports whether there were any.
func (r *Runner) noteSuccess(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, had := r.failures[name]
	delete(r.failures, name)
	return had
}

// reportParked logs and counts events this runner parked.
func (r *Runner) reportParked(parked []ParkedEvent) {
	for _, pe := range parked {
		r.metric(pe.Projection, func() { r.m.parked.WithLabelValues(pe.Projection).Inc() })
		r.cfg.Logger.Error("projection parked an event it cannot apply; it moves on without it (arr projections parked / retry)",
			"projection", pe.Projection, "position", pe.Position, "event_type", pe.EventType, "err", pe.Error)
	}
}

// replaceParked sets projection name's parked events in (from, upTo] to
// those a rebuild parked, in the rebuild's swap transaction: the others
// are marked cleared (a SQL projection's role may not delete them, see
// migration 00061; purgeCleared does, later, in arr's own session).
func replaceParked(ctx context.Context, tx pgx.Tx, name string, from, upTo uint64, parked []ParkedEvent) error {
	if _, err := tx.Exec(ctx, `UPDATE public.projection_parked SET cleared_at = now()
		WHERE projection = $1 AND position > $2 AND position <= $3 AND cleared_at IS NULL`, name, int64(from), int64(upTo)); err != nil {
		return fmt.Errorf("clearing parked events: %w", err)
	}
	return insertParked(ctx, tx, parked)
}

// purgeCleared deletes projection name's cleared parked events, in a
// session of arr's own (pool).
func purgeCleared(ctx context.Context, pool interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, name string) error {
	if _, err := pool.Exec(ctx, `DELETE FROM public.projection_parked WHERE projection = $1 AND cleared_at IS NOT NULL`, name); err != nil {
		return fmt.Errorf("deleting cleared parked events of %s: %w", name, err)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 { // do not cut a UTF-8 sequence
		n--
	}
	return s[:n]
}
