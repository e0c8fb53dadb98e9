package sqlproj

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// How analyst SQL runs (docs/sql-projections.md, "Safety"):
//
//   - Only inside arr's SECURITY DEFINER functions of the projection's
//     schema, owned by the projection's role (role.go). Inside them
//     current_user is that role, and PostgreSQL refuses every change of
//     role (SET ROLE, RESET ROLE, SET SESSION AUTHORIZATION, set_config
//     of role, a function's SET role) for as long as they run, whatever
//     they call.
//   - The role owns those functions, so the SQL they run could alter
//     them (say, to SECURITY INVOKER, which would run the next call as
//     arr's own user). So before every call arr checks, in the same
//     transaction and holding the projection's advisory lock (which every
//     transaction that runs the projection's SQL takes), that the function
//     is still the one arr made: SECURITY DEFINER, owned by the role, no
//     SET clause, the same body.
//   - Around the call: search_path is the projection's schema alone and
//     statement_timeout bounds it (plan_cache_mode is force_generic_plan:
//     the parameters are whole batches, which a custom plan would copy
//     into every plan); after it RESET ALL undoes whatever the
//     SQL set (search_path included), and the settings the runner had are
//     put back. The runner's own statements after a projection's SQL name
//     their tables with their schema.
//   - The transactions run on a pool whose connections serve one
//     transaction each and use no named prepared statements, so nothing
//     the SQL leaves in a session (prepared statements, settings,
//     temporary objects, advisory locks) meets arr's own statements.
type guard struct {
	name    string
	role    string
	timeout time.Duration
}

// lockKeys is the projection's advisory lock.
func (g *guard) lockKeys() (int32, int32) {
	h := fnv.New32a()
	h.Write([]byte(g.name))
	return 0x61727271, int32(h.Sum32()) // "arrq"
}

// FunctionAlteredError says an arr function of a projection's schema is
// not the one arr made: the projection's own SQL changed or dropped it.
// arr calls it no more; rebuild the projection (or drop it).
type FunctionAlteredError struct {
	Schema, Function string
}

func (e *FunctionAlteredError) Error() string {
	return fmt.Sprintf("%s.%s is not the function arr made (the projection's SQL altered or dropped it): arr will not call it; rebuild or drop the projection", e.Schema, e.Function)
}

// call runs `SELECT * FROM schema.fn(args…)` as the role, guarded as the
// comment above says; rows (if not nil) reads its result. body is the
// function's expected source; shared takes the advisory lock shared (a
// read-only query) rather than exclusive.
func (g *guard) call(ctx context.Context, tx pgx.Tx, schema, sig, body string, shared bool, rows func(pgx.Rows) error, args ...any) error {
	k1, k2 := g.lockKeys()
	lock := "pg_catalog.pg_advisory_xact_lock"
	if shared {
		lock = "pg_catalog.pg_advisory_xact_lock_shared"
	}
	qualified := pgx.Identifier{schema}.Sanitize() + "." + sig
	// The lock first, in a statement of its own: the check that follows
	// reads the catalog as it is once nobody else runs the projection's SQL
	// (the pool's transactions are READ COMMITTED).
	if _, err := tx.Exec(ctx, `SELECT `+lock+`($1, $2)`, k1, k2); err != nil {
		return fmt.Errorf("locking %s: %w", g.name, err)
	}
	var ok *bool
	var searchPath, syncCommit string
	err := tx.QueryRow(ctx, `SELECT
		(SELECT p.prosecdef AND p.proconfig IS NULL AND p.prosrc = $3
			AND p.proowner = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = $2)
		 FROM pg_catalog.pg_proc p WHERE p.oid = pg_catalog.to_regprocedure($1)),
		pg_catalog.current_setting('search_path'), pg_catalog.current_setting('synchronous_commit')`,
		qualified, g.role, body).Scan(&ok, &searchPath, &syncCommit)
	if err != nil {
		return fmt.Errorf("checking %s: %w", qualified, err)
	}
	if ok == nil || !*ok {
		return &FunctionAlteredError{Schema: schema, Function: sig}
	}
	if _, err := tx.Exec(ctx, `SELECT pg_catalog.set_config('search_path', $1, true), pg_catalog.set_config('statement_timeout', $2, true),
		pg_catalog.set_config('TimeZone', 'UTC', true), pg_catalog.set_config('DateStyle', 'ISO, MDY', true),
		pg_catalog.set_config('plan_cache_mode', 'force_generic_plan', true)`,
		pgx.Identifier{schema}.Sanitize(), strconv.FormatInt(max(1, g.timeout.Milliseconds()), 10)); err != nil {
		return fmt.Errorf("entering %s: %w", schema, err)
	}
	fn, _, _ := cutParen(sig)
	placeholders := ""
	for i := range args {
		if i > 0 {
			placeholders += ", "
		}
		placeholders += "$" + strconv.Itoa(i+1)
	}
	r, err := tx.Query(ctx, `SELECT * FROM `+pgx.Identifier{schema}.Sanitize()+`.`+fn+`(`+placeholders+`)`, args...)
	if err != nil {
		return err
	}
	if rows != nil {
		err = rows(r)
	}
	r.Close()
	if err = errors.Join(err, r.Err()); err != nil {
		return err
	}
	// Undo what the SQL set, then put back what the runner had set.
	if _, err := tx.Exec(ctx, `RESET ALL`); err != nil {
		return fmt.Errorf("leaving %s: %w", schema, err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_catalog.set_config('search_path', $1, true), pg_catalog.set_config('synchronous_commit', $2, true)`, searchPath, syncCommit); err != nil {
		return fmt.Errorf("leaving %s: %w", schema, err)
	}
	return nil
}

func cutParen(sig string) (string, string, bool) {
	for i := range sig {
		if sig[i] == '(' {
			return sig[:i], sig[i:], true
		}
	}
	return sig, "", false
}
