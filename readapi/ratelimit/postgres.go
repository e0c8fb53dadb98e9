package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgresConfig configures the PostgreSQL limiter.
type PostgresConfig struct {
	// CleanupEvery is how often Run deletes the counters of ended windows.
	// Default 10 minutes.
	CleanupEvery time.Duration
	// CleanupBatch bounds the rows one DELETE removes. Default 5000.
	CleanupBatch int
	// Keep is how long after its end a window's counter is kept. Default 1h.
	Keep time.Duration
	// Now is the clock of Cleanup. Default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Validate fills in defaults and checks the values.
func (c *PostgresConfig) Validate() error {
	if c.CleanupEvery == 0 {
		c.CleanupEvery = 10 * time.Minute
	}
	if c.CleanupBatch == 0 {
		c.CleanupBatch = 5000
	}
	if c.Keep == 0 {
		c.Keep = time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	var errs []error
	if c.CleanupEvery < 0 {
		errs = append(errs, fmt.Errorf("ratelimit: CleanupEvery is negative (%s)", c.CleanupEvery))
	}
	if c.CleanupBatch < 1 {
		errs = append(errs, fmt.Errorf("ratelimit: CleanupBatch must be at least 1, not %d", c.CleanupBatch))
	}
	if c.Keep < 0 {
		errs = append(errs, fmt.Errorf("ratelimit: Keep is negative (%s)", c.Keep))
	}
	return errors.Join(errs...)
}

// Postgres is the default Limiter: counters in the quota_counters table,
// one atomic upsert per request. Concurrent upserts of one counter queue on
// its row lock and each re-checks the count it finds, so the limit holds
// exactly across any number of processes. Safe for concurrent use.
type Postgres struct {
	pool *pgxpool.Pool
	cfg  PostgresConfig
}

// NewPostgres returns a limiter on pool, whose database has migration 00004.
func NewPostgres(pool *pgxpool.Pool, cfg PostgresConfig) (*Postgres, error) {
	if pool == nil {
		return nil, errors.New("ratelimit: nil pool")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Postgres{pool: pool, cfg: cfg}, nil
}

// takeSQL inserts the window's counter at 1 or increments it while it is
// below the limit; no row back means the window is full.
const takeSQL = `INSERT INTO quota_counters AS q (bucket, window_start, window_end, count) VALUES ($1, $2, $3, 1)
ON CONFLICT (bucket, window_start) DO UPDATE SET count = q.count + 1 WHERE q.count < $4
RETURNING q.count`

// Take implements Limiter. The counter's transaction commits without
// waiting for its WAL flush (synchronous_commit off, for this transaction
// only): the limit still holds exactly among running processes (the row
// lock orders the takes), and a server crash can forget at most the last
// fraction of a second of counts, which is what a counter of operational
// state may lose. It saves a disk flush per request on the hottest public
// path. BEGIN, the setting, the upsert and COMMIT go in one round trip.
func (p *Postgres) Take(ctx context.Context, bucket string, w Window, limit int64) (Result, error) {
	if limit < 1 {
		return denied(w, limit), nil
	}
	// quota_counters is UNLOGGED (migration 00010): this commit writes no
	// WAL and does not wait for a flush.
	var n int64
	var counted bool
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SET LOCAL synchronous_commit = off`)
	b.Queue(takeSQL, bucket, w.Start, w.End, limit).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&n)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		counted = err == nil
		return err
	})
	b.Queue(`COMMIT`)
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return Result{}, fmt.Errorf("counting %s: %w", bucket, err)
	}
	if !counted {
		return denied(w, limit), nil
	}
	return admitted(w, limit, n), nil
}

// Count reads the window's counter (0 when there is none yet).
func (p *Postgres) Count(ctx context.Context, bucket string, w Window) (int64, error) {
	var n int64
	err := p.pool.QueryRow(ctx, `SELECT coalesce((SELECT count FROM quota_counters WHERE bucket = $1 AND window_start = $2), 0)`, bucket, w.Start).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("reading the counter of %s: %w", bucket, err)
	}
	return n, nil
}

// Give implements Limiter with one UPDATE of the window's counter.
func (p *Postgres) Give(ctx context.Context, bucket string, w Window) error {
	if _, err := p.pool.Exec(ctx, `UPDATE quota_counters SET count = count - 1 WHERE bucket = $1 AND window_start = $2 AND count > 0`,
		bucket, w.Start); err != nil {
		return fmt.Errorf("giving back a request of %s: %w", bucket, err)
	}
	return nil
}

// TakeMany implements BatchLimiter in one round trip and one transaction
// (committed without waiting for a flush, as Take's): it creates the
// missing counters, locks every counter in (bucket, window) order, so that
// concurrent batches of other processes cannot deadlock, reads their
// counts, and raises each by what it admits.
func (p *Postgres) TakeMany(ctx context.Context, asks []Ask) ([]Granted, error) {
	out := make([]Granted, len(asks))
	var buckets []string
	var starts, ends []time.Time
	var ns, limits []int64
	at := make(map[counterKey]int, len(asks))
	for i, a := range asks {
		if a.Limit < 1 || a.N < 1 {
			continue
		}
		k := counterKey{a.Bucket, a.Window.Start.UnixNano()}
		if _, dup := at[k]; dup {
			return nil, fmt.Errorf("counting %s: one window asked twice in a batch", a.Bucket)
		}
		at[k] = i
		buckets, starts, ends = append(buckets, a.Bucket), append(starts, a.Window.Start), append(ends, a.Window.End)
		ns, limits = append(ns, a.N), append(limits, a.Limit)
	}
	if len(buckets) == 0 {
		return out, nil
	}
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SET LOCAL synchronous_commit = off`)
	b.Queue(`INSERT INTO quota_counters (bucket, window_start, window_end, count)
SELECT b, s, e, 0 FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) AS v(b, s, e) ORDER BY b, s
ON CONFLICT (bucket, window_start) DO NOTHING`, buckets, starts, ends)
	// FOR UPDATE returns each counter's newest committed count once it
	// holds the lock; the locks are taken in the sort's order.
	var scanErr error
	b.Queue(`SELECT bucket, window_start, count FROM quota_counters
WHERE (bucket, window_start) IN (SELECT * FROM unnest($1::text[], $2::timestamptz[]))
ORDER BY bucket, window_start FOR UPDATE`, buckets, starts).Query(func(rows pgx.Rows) error {
		var bucket string
		var start time.Time
		var count int64
		_, err := pgx.ForEachRow(rows, []any{&bucket, &start, &count}, func() error {
			i, ok := at[counterKey{bucket, start.UnixNano()}]
			if !ok {
				return fmt.Errorf("counter %s of %s was not asked for", bucket, start)
			}
			got := min(asks[i].N, max(asks[i].Limit-count, 0))
			out[i] = Granted{Admitted: got, Count: count + got}
			return nil
		})
		scanErr = err
		return err
	})
	b.Queue(`UPDATE quota_counters q SET count = q.count + LEAST(v.n, GREATEST(v.lim - q.count, 0))
FROM unnest($1::text[], $2::timestamptz[], $3::bigint[], $4::bigint[]) AS v(b, s, n, lim)
WHERE q.bucket = v.b AND q.window_start = v.s`, buckets, starts, ns, limits)
	b.Queue(`COMMIT`)
	err := p.pool.SendBatch(ctx, b).Close()
	if err == nil {
		err = scanErr
	}
	if err != nil {
		return nil, fmt.Errorf("counting the requests of %d buckets: %w", len(buckets), err)
	}
	return out, nil
}

type counterKey struct {
	bucket string
	start  int64
}

// Cleanup deletes the counters of windows that ended more than Keep ago,
// CleanupBatch rows per statement, and returns how many it deleted.
func (p *Postgres) Cleanup(ctx context.Context) (int64, error) {
	cutoff := p.cfg.Now().Add(-p.cfg.Keep)
	var total int64
	for {
		tag, err := p.pool.Exec(ctx, `DELETE FROM quota_counters WHERE (bucket, window_start) IN (
			SELECT bucket, window_start FROM quota_counters WHERE window_end < $1 LIMIT $2)`, cutoff, p.cfg.CleanupBatch)
		if err != nil {
			return total, fmt.Errorf("deleting ended quota windows: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(p.cfg.CleanupBatch) || ctx.Err() != nil {
			return total, nil
		}
	}
}

// Run calls Cleanup every CleanupEvery until ctx ends. Failures are logged
// and retried at the next tick; Run returns nil when ctx ends.
func (p *Postgres) Run(ctx context.Context) error {
	t := time.NewTicker(p.cfg.CleanupEvery)
	defer t.Stop()
	for {
		if n, err := p.Cleanup(ctx); err != nil && ctx.Err() == nil {
			p.cfg.Logger.Warn("quota counters cleanup failed; retrying later", "err", err)
		} else if n > 0 {
			p.cfg.Logger.Debug("quota counters of ended windows deleted", "rows", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
