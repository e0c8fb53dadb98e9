package sqlproj

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/projections"
)

// Check tries a parsed definition against the database without keeping
// anything of it. arr makes a scratch role (like a projection's, whose
// logins end soon: VALID UNTIL) and a scratch schema given to it, and
// commits them, so that a session can log in as the role; in that
// session, in a transaction that is rolled back, the DDL runs in the
// scratch schema, then each arr:on and arr:batch statement is prepared
// (which resolves its tables, columns, types and ON CONFLICT targets) and
// explained (which checks the role may read and write what it names).
// Then the role and schema are dropped; what a crash leaves, the sweep
// drops (Sweep). The first failure is an *Error naming the statement and
// its line.
func (e *Engine) Check(ctx context.Context, d *Definition) error {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	suffix := hex.EncodeToString(b)
	role := checkRoleName(e.dbOID, suffix)
	g := &guard{name: "check:" + suffix, role: role, timeout: e.cfg.StatementTimeout, limits: e.limits(), shown: projections.Schema(d.Name), maxBytes: e.cfg.MaxBytes}
	schema := "arr_check_" + suffix
	// Long enough for the check's session to log in, however slow the
	// check then is.
	spec, err := e.spec(ctx, role, "", time.Now().Add(checkLogin))
	if err != nil {
		return fmt.Errorf("checking %s: %w", d.File, err)
	}
	defer e.dropScratch(role, schema)
	if err := e.prepare(ctx, spec, schema); err != nil {
		return fmt.Errorf("checking %s: %w", d.File, err)
	}
	tx, err := e.begin(ctx, role, pgx.TxOptions{})
	if err != nil {
		return fmt.Errorf("checking %s: %w", d.File, err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	if err := build(ctx, tx, schema, g, d, nil); err != nil {
		return err
	}
	for _, s := range d.Sections {
		for i, st := range s.Statements {
			what := fmt.Sprintf("%s, statement %d", s.Directive(), i+1)
			name := fmt.Sprintf("arr_check_%d", i)
			text, m := prepared(s, st)
			prefix := "PREPARE " + name + " (" + prepareTypes(s.Batch) + ") AS "
			if err := g.call(ctx, tx, schema, execFn, nil, prefix+text); err != nil {
				return d.stmtError(what, st, m, prefix, prefix+text, err)
			}
			nulls := strings.TrimSuffix(strings.Repeat("NULL, ", len(eventNames)), ", ")
			for _, q := range []string{"EXPLAIN EXECUTE " + name + "(" + nulls + ")", "DEALLOCATE " + name} {
				if err := g.call(ctx, tx, schema, execFn, nil, q); err != nil {
					return d.stmtError(what, st, nil, "", "", err)
				}
			}
		}
	}
	// Last, the function that runs them all: what PL/pgSQL itself refuses.
	prog := compile(d)
	for _, stmt := range applyFunction(schema, g.role, prog) {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return &Error{File: d.File, Msg: fmt.Sprintf("the sections do not compile: %v", err), Err: err}
		}
	}
	// With arr_apply made: the DDL may not have made another of that name.
	var forbidden []string
	if err := tx.QueryRow(ctx, forbiddenQuery, schema, arrFunctions).Scan(&forbidden); err != nil {
		return fmt.Errorf("checking %s: %w", d.File, err)
	}
	if err := g.forbidden(schema, forbidden); err != nil {
		return &Error{File: d.File, Msg: err.Error(), Err: err}
	}
	return nil
}

// checkLogin is how long after a check starts its scratch role may log in.
const checkLogin = 10 * time.Minute

// dropScratch drops a check's scratch role and schema, as arr: the
// role's sessions are ended first (the check's own is closed by then).
func (e *Engine) dropScratch(role, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.dropRole(ctx, role, schema); err != nil {
		e.cfg.Logger.Warn("SQL projections: dropping a check's scratch role (the sweep at the next start drops it)", "role", role, "err", err)
	}
}

// dropRole ends role's sessions and drops schemas (if they exist),
// everything role owns or may use in this database, and role, in one
// transaction of arr's.
func (e *Engine) dropRole(ctx context.Context, role string, schemas ...string) error {
	return pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error { return e.dropRoleTx(ctx, tx, role, schemas...) })
}

// dropRoleTx is dropRole in arr's transaction tx. Dropping runs none of
// the role's code (no trigger or rule fires on DROP, and event triggers
// are a superuser's), so it needs no session of the role's.
func (e *Engine) dropRoleTx(ctx context.Context, tx pgx.Tx, role string, schemas ...string) error {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $1)`, role).Scan(&exists); err != nil {
		return err
	}
	if exists {
		if err := e.terminateAll(ctx, e.pool, role); err != nil {
			return fmt.Errorf("ending the sessions of %s: %w", role, err)
		}
	}
	if len(schemas) > 0 {
		ids := make([]string, len(schemas))
		for i, s := range schemas {
			ids[i] = pgx.Identifier{s}.Sanitize()
		}
		if _, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+strings.Join(ids, ", ")+` CASCADE`); err != nil {
			return fmt.Errorf("dropping %s: %w", strings.Join(schemas, ", "), err)
		}
	}
	if exists {
		id := pgx.Identifier{role}.Sanitize()
		if _, err := tx.Exec(ctx, roleSetupLock); err != nil {
			return fmt.Errorf("dropping role %s: %w", role, err)
		}
		if _, err := tx.Exec(ctx, `DROP OWNED BY `+id+`; DROP ROLE `+id); err != nil {
			return fmt.Errorf("dropping role %s: %w", role, err)
		}
	}
	return nil
}

// setSearchPath points unqualified names at schema for the rest of the
// transaction.
func setSearchPath(ctx context.Context, tx pgx.Tx, schema string) error {
	_, err := tx.Exec(ctx, "SELECT pg_catalog.set_config('search_path', $1, true)", pgx.Identifier{schema}.Sanitize())
	return err
}
