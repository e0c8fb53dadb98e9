package spend

import (
	"context"
	"errors"
	"fmt"
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

// Run deletes ended minute counters every ten minutes until ctx ends.
func (l *Ledger) Run(ctx context.Context) error {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
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
