package projections

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arr-dev/arr/domain/wait"
)

// retiredDropLockTimeout bounds how long the drop of a retired schema
// waits for a lock on what it holds. A reader that began before a swap
// (a long export) may still be reading the retired tables; a DROP that
// waited for it would hold every later query of those tables, and its
// lock request would queue the others behind it. Past the bound the drop
// gives up and the schema is left for the next try (dropRetired).
const retiredDropLockTimeout = 250 * time.Millisecond

// retiredSchemas lists name's retired schemas: NAME__retired (the one
// the last swap made) and NAME__retired_* (older ones, renamed aside by
// a swap while a reader held them). A projection name never holds "__"
// (domain/analysis), so no other projection's schema matches.
const retiredSchemasSQL = `SELECT nspname FROM pg_catalog.pg_namespace
	WHERE nspname = $1 OR left(nspname, length($1) + 1) = $1 || '_' ORDER BY nspname`

// dropRetired drops name's retired schemas, each in a transaction of its
// own under retiredDropLockTimeout; one still held by a reader is left,
// and logged, for the next try: the next replay of name, the next setup
// of the projections (a process starting), or the retry of a runner
// following name (dropRetiredLater). It reports whether any is left. It
// never fails the caller: the live read model is whole without it.
func (r *Runner) dropRetired(ctx context.Context, name string) (left bool) {
	rows, err := r.pool.Query(ctx, retiredSchemasSQL, retiredSchema(name))
	var schemas []string
	if err == nil {
		schemas, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		r.cfg.Logger.Warn("listing retired read models", "projection", name, "err", err)
		return true
	}
	for _, s := range schemas {
		err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, strconv.FormatInt(retiredDropLockTimeout.Milliseconds(), 10)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{s}.Sanitize()+` CASCADE`)
			return err
		})
		var pgErr *pgconn.PgError
		switch {
		case errors.As(err, &pgErr) && pgErr.Code == "55P03": // lock_not_available
			r.cfg.Logger.Info("retired read model still read: its drop is tried again later", "projection", name, "schema", s)
		case err != nil:
			r.cfg.Logger.Warn("dropping retired read model", "projection", name, "schema", s, "err", err)
		}
		left = left || err != nil
	}
	return left
}

// The retry of deferred drops (dropRetiredLater).
const (
	// retiredRetry is how often a running runner looks for retired
	// schemas left, and the least wait before it tries a projection's
	// drop again.
	retiredRetry = 5 * time.Second
	// retiredRetryMax bounds that wait, which each try that leaves a
	// schema doubles: a reader holding one for long (an export of
	// minutes) meets a DROP's lock request (each queueing the reader's
	// later queries for up to retiredDropLockTimeout) a few times an
	// hour at most.
	retiredRetryMax = 5 * time.Minute
)

// retiredLeftSQL lists the projections with a retired schema left:
// rm_NAME__retired or rm_NAME__retired_*, NAME being what precedes the
// first "__" (a projection name holds none).
const retiredLeftSQL = `SELECT DISTINCT substr(nspname, 4, strpos(nspname, '__') - 4) FROM pg_catalog.pg_namespace
	WHERE nspname LIKE 'rm\_%\_\_retired%'`

// dropRetiredLater retries, until ctx ends, the drops that were left (a
// reader held the schema) of the projections whose lease this runner
// holds, so one process tries each: every retiredRetry it lists what is
// left and tries each projection whose wait has passed (dropRetired); a
// try that leaves a schema doubles the projection's wait, up to
// retiredRetryMax. A rebuild run by another process (the CLI), whose own
// drop was deferred, is so cleaned up by the process that follows the
// projection, once its readers are gone.
func (r *Runner) dropRetiredLater(ctx context.Context) {
	type try struct {
		next time.Time
		wait time.Duration
	}
	tries := map[string]try{}
	for wait.Sleep(ctx, retiredRetry) {
		rows, err := r.pool.Query(ctx, retiredLeftSQL)
		var names []string
		if err == nil {
			names, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		if err != nil {
			if ctx.Err() == nil {
				r.cfg.Logger.Warn("listing retired read models", "err", err)
			}
			continue
		}
		next := map[string]try{}
		for _, n := range names {
			t := tries[n]
			if _, err := r.get(n); err != nil || !r.holdsLease(n) || time.Now().Before(t.next) {
				next[n] = t
				continue
			}
			if r.dropRetired(ctx, n) {
				t.wait = min(max(2*t.wait, retiredRetry), retiredRetryMax)
				t.next = time.Now().Add(t.wait)
				next[n] = t
			}
		}
		tries = next
	}
}

// retiredAside returns the statement that renames name's retired schema,
// if one is left (its drop deferred), to a name of its own, in tx (the
// swap's), so that the swap can retire the live schema under
// NAME__retired without waiting for the reader that holds the old one.
// The new name ends with tx's id, in base 36, unique.
func retiredAside(ctx context.Context, tx pgx.Tx, name string) ([]string, error) {
	var left bool
	var xid string
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1), pg_current_xact_id()::text`,
		retiredSchema(name)).Scan(&left, &xid); err != nil {
		return nil, fmt.Errorf("looking for a retired schema left: %w", err)
	}
	if !left {
		return nil, nil
	}
	n, err := strconv.ParseUint(xid, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("transaction id %q: %w", xid, err)
	}
	to := retiredSchema(name) + "_" + strconv.FormatUint(n, 36)
	// A drop tried meanwhile (dropRetiredLater, another process's
	// replay) may take the schema first: the rename, which waits for it,
	// then finds none, and the swap goes on.
	return []string{`DO $$BEGIN ALTER SCHEMA ` + pgx.Identifier{retiredSchema(name)}.Sanitize() + ` RENAME TO ` + pgx.Identifier{to}.Sanitize() +
		`; EXCEPTION WHEN invalid_schema_name THEN NULL; END$$`}, nil
}
