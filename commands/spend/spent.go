package spend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/domain/account"
)

// Spent is a budget's current period: its span, what ended requests spent
// and what requests in flight have reserved, in micro-dollars.
type Spent struct {
	Period   account.Period
	Start    time.Time
	End      time.Time
	Used     account.MicroUSD
	Reserved account.MicroUSD
}

// Ledger reads the spend of budgets' current periods. Safe for
// concurrent use.
type Ledger struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// NewLedger returns a Ledger over pool's spend_counters.
func NewLedger(pool *pgxpool.Pool, now func() time.Time) (*Ledger, error) {
	if pool == nil || now == nil {
		return nil, errors.New("spend: nil pool or clock")
	}
	return &Ledger{pool: pool, now: now}, nil
}

// KeySpent is the spend of key's budget (period p) in its current period.
func (l *Ledger) KeySpent(ctx context.Context, key uuid.UUID, p account.Period) (Spent, error) {
	return l.spent(ctx, KeyBudgetBucket(key.String(), p), p)
}

// AccountSpent is the spend of an account's budget in its current period.
func (l *Ledger) AccountSpent(ctx context.Context, acc uuid.UUID, p account.Period) (Spent, error) {
	return l.spent(ctx, AccountBudgetBucket(acc.String(), p), p)
}

func (l *Ledger) spent(ctx context.Context, bucket string, p account.Period) (Spent, error) {
	s := Spent{Period: p}
	s.Start, s.End = p.Window(l.now())
	err := l.pool.QueryRow(ctx, `SELECT used, reserved FROM spend_counters WHERE bucket = $1 AND window_start = $2`, bucket, s.Start).
		Scan(&s.Used, &s.Reserved)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return s, fmt.Errorf("reading the spend of %s: %w", bucket, err)
	}
	return s, nil
}

// Cleanup deletes the counters of minute windows that ended over an hour
// ago (budget periods stay: their spend is shown), at most batch rows.
func (l *Ledger) Cleanup(ctx context.Context, batch int) (int64, error) {
	tag, err := l.pool.Exec(ctx, `DELETE FROM spend_counters WHERE (bucket, window_start) IN (
		SELECT bucket, window_start FROM spend_counters WHERE window_end < $1 AND window_end - window_start = interval '1 minute' LIMIT $2)`,
		l.now().Add(-time.Hour), batch)
	if err != nil {
		return 0, fmt.Errorf("deleting ended minute counters: %w", err)
	}
	return tag.RowsAffected(), nil
}

// sweepBegin begins a sweep and sets its idle_in_transaction_session_timeout
// (3 s, as the event store's HeadIdle), in one round trip: a query without
// arguments goes by the simple protocol, which takes several statements.
const sweepBegin = `BEGIN; SET LOCAL idle_in_transaction_session_timeout = '3s'`

// Sweep handles up to batch reservations whose lease ran out on the
// database's clock (their request's process died, froze or could not
// settle): one with a budget period still running stays counted, its
// lease extended to that period's end; the others' amounts leave the
// counters' reserved. Reservations and then counters are locked in order,
// as settle locks them, so a late settle waits and then finds its
// reservation released (it adds what it spent and releases nothing).
//
// It is the one spend transaction that holds counters across round trips
// (the others are one pipeline each), so it lets the server end it when
// it idles 3 s with them locked: a sweeping process frozen there
// (SIGSTOP) does not stall every reservation of those buckets, in every
// process, until it wakes; its COMMIT then fails and nothing is swept.
func (l *Ledger) Sweep(ctx context.Context, batch int) (int64, error) {
	tx, err := l.pool.BeginTx(ctx, pgx.TxOptions{BeginQuery: sweepBegin})
	if err != nil {
		return 0, fmt.Errorf("sweeping reservations: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	rows, err := tx.Query(ctx, `SELECT id FROM spend_reservations WHERE expires_at < statement_timestamp() ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`, batch)
	if err != nil {
		return 0, fmt.Errorf("sweeping reservations: %w", err)
	}
	expired, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil || len(expired) == 0 {
		return 0, err
	}
	// A reservation with a budget period still running stays counted:
	// its lease is extended to the end of the last such period, and only
	// then is it released. Its request may still be running (a frozen
	// process, a settle lost to a database blip), and the room it holds
	// must not be spent twice; when it settles, its actual cost replaces
	// it.
	rows, err = tx.Query(ctx, `WITH live AS (
	SELECT r.id, max(c.window_end) AS until FROM spend_reservations r, unnest(r.buckets, r.starts) AS x(b, s), spend_counters c
	WHERE r.id = ANY($1) AND c.bucket = x.b AND c.window_start = x.s AND c.window_end > statement_timestamp() GROUP BY r.id)
UPDATE spend_reservations r SET expires_at = live.until FROM live WHERE r.id = live.id RETURNING r.id`, expired)
	if err != nil {
		return 0, fmt.Errorf("sweeping reservations: %w", err)
	}
	kept, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return 0, fmt.Errorf("sweeping reservations: %w", err)
	}
	var ids []uuid.UUID
	for _, id := range expired {
		if !slices.Contains(kept, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return int64(len(expired)), tx.Commit(ctx)
	}
	const touched = `SELECT x.b, x.s, sum(x.a) AS a FROM spend_reservations r, unnest(r.buckets, r.starts, r.amounts) AS x(b, s, a)
		WHERE r.id = ANY($1) GROUP BY x.b, x.s`
	for _, sql := range []string{
		`SELECT 1 FROM spend_counters c JOIN (` + touched + `) x ON c.bucket = x.b AND c.window_start = x.s ORDER BY c.bucket, c.window_start FOR UPDATE OF c`,
		`UPDATE spend_counters c SET reserved = GREATEST(c.reserved - x.a, 0) FROM (` + touched + `) x WHERE c.bucket = x.b AND c.window_start = x.s`,
		`DELETE FROM spend_reservations WHERE id = ANY($1)`,
	} {
		if _, err := tx.Exec(ctx, sql, ids); err != nil {
			return 0, fmt.Errorf("sweeping reservations: %w", err)
		}
	}
	return int64(len(expired)), tx.Commit(ctx)
}

// Run releases expired reservations and deletes ended minute counters
// every minute until ctx ends.
func (l *Ledger) Run(ctx context.Context) error {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		for ctx.Err() == nil {
			n, err := l.Sweep(ctx, 1000)
			if err != nil || n < 1000 {
				break
			}
		}
		for ctx.Err() == nil {
			n, err := l.Cleanup(ctx, 5000)
			if err != nil || n < 5000 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
