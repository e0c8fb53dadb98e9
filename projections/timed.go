package projections

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arr-dev/arr/domain"
)

// statementLimitKey carries a request's statement timeout in its context.
type statementLimitKey struct{}

// WithStatementTimeout returns ctx with the statement timeout d: every
// query a Timed DB runs for it is cancelled by the server after d (and
// the context ends a grace second later, so waiting for a connection is
// bounded too). A route sets its own (readapi/recordsapi).
func WithStatementTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx = context.WithValue(ctx, statementLimitKey{}, d)
	return context.WithTimeout(ctx, d+statementGrace)
}

// statementGrace is how much longer than its statement timeout a request's
// context lives: the server's cancellation arrives first and names the
// limit; the context's end bounds only the wait for a connection.
const statementGrace = time.Second

// StatementTimeoutOf is the statement timeout WithStatementTimeout put in
// ctx; false without one.
func StatementTimeoutOf(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(statementLimitKey{}).(time.Duration)
	return d, ok
}

// Timed returns db, but a query whose context carries a statement timeout
// (WithStatementTimeout) runs in a read-only transaction whose
// statement_timeout is that limit, so the server itself stops it (a
// client that only closes its connection leaves a CPU-bound statement
// running). A query the server cancels for its limit, or whose context
// ends first, fails with a domain error of kind domain.ErrUnavailable and
// code query_timeout that names the limit. Without a limit in the
// context, db is used as it is. Safe for concurrent use if db is.
func Timed(db DB) DB { return timedDB{db} }

type timedDB struct{ db DB }

// QueryTimeout is the error of a query stopped at its statement timeout.
func QueryTimeout(limit time.Duration) *domain.Error {
	return &domain.Error{Kind: domain.ErrUnavailable, Code: "query_timeout",
		Message: fmt.Sprintf("the query ran past this route's statement timeout of %s and was cancelled; ask for less (a smaller area, a simpler polygon, a higher zoom) or retry later", limit)}
}

// begin opens the limited transaction of ctx; nil without a limit.
func (t timedDB) begin(ctx context.Context) (pgx.Tx, time.Duration, error) {
	limit, ok := StatementTimeoutOf(ctx)
	if !ok {
		return nil, 0, nil
	}
	tx, err := t.db.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, limit, timeoutError(ctx, limit, err)
	}
	ms := strconv.FormatInt(max(1, limit.Milliseconds()), 10)
	if _, err := tx.Exec(ctx, `SELECT set_config('statement_timeout', $1, true)`, ms); err != nil {
		_ = tx.Rollback(context.Background())
		return nil, limit, timeoutError(ctx, limit, err)
	}
	return tx, limit, nil
}

// timeoutError turns a cancellation at the limit (SQLSTATE 57014, or the
// context's end) into QueryTimeout, keeping err as its cause.
func timeoutError(ctx context.Context, limit time.Duration, err error) error {
	var pgErr *pgconn.PgError
	if (errors.As(err, &pgErr) && pgErr.Code == "57014") || errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w (%w)", QueryTimeout(limit), err)
	}
	return err
}

func (t timedDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	tx, limit, err := t.begin(ctx)
	if err != nil || tx == nil {
		if err != nil {
			return nil, err
		}
		return t.db.Query(ctx, sql, args...)
	}
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		_ = tx.Rollback(context.Background())
		return nil, timeoutError(ctx, limit, err)
	}
	return &timedRows{Rows: rows, ctx: ctx, tx: tx, limit: limit}, nil
}

func (t timedDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	tx, limit, err := t.begin(ctx)
	if err != nil {
		return errRow{err}
	}
	if tx == nil {
		return t.db.QueryRow(ctx, sql, args...)
	}
	return timedRow{row: tx.QueryRow(ctx, sql, args...), ctx: ctx, tx: tx, limit: limit}
}

func (t timedDB) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	// Batches are the read models' multi-statement reads; they run with
	// the context's deadline only.
	return t.db.SendBatch(ctx, b)
}

func (t timedDB) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	return t.db.BeginTx(ctx, opts)
}

// timedRows ends its transaction when closed and names the limit in its
// error.
type timedRows struct {
	pgx.Rows
	ctx   context.Context
	tx    pgx.Tx
	limit time.Duration
	done  bool
}

func (r *timedRows) Close() {
	r.Rows.Close()
	if !r.done {
		r.done = true
		_ = r.tx.Rollback(context.Background())
	}
}

func (r *timedRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *timedRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return timeoutError(r.ctx, r.limit, err)
	}
	return nil
}

type timedRow struct {
	row   pgx.Row
	ctx   context.Context
	tx    pgx.Tx
	limit time.Duration
}

func (r timedRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	_ = r.tx.Rollback(context.Background())
	if err != nil {
		return timeoutError(r.ctx, r.limit, err)
	}
	return nil
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
