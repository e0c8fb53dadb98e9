package postgres

import (
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// onExec sets fn to read qq's result when the batch's results are read:
// its command tag, or the error the statement failed with, so that the
// code that queues a statement also names its failure (a unique
// violation, a guard's division by zero). pgx's QueuedQuery.Exec hands its
// callback successes only; this reads the result through
// QueuedQuery.Query, which reads it off the connection as Exec does.
// After a failure pgx calls no later statement's callback, and the
// batch's Close returns the error fn returned.
func onExec(qq *pgx.QueuedQuery, fn func(pgconn.CommandTag, error) error) {
	qq.Query(func(rows pgx.Rows) error {
		rows.Close()
		return fn(rows.CommandTag(), rows.Err())
	})
}

// failsAs is an onExec callback that names a statement's failure what.
func failsAs(what string) func(pgconn.CommandTag, error) error {
	return func(_ pgconn.CommandTag, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
}
