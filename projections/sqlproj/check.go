package sqlproj

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/projections"
)

// Check tries a parsed definition against the database without changing
// it: in a transaction that is rolled back, a scratch role (made like a
// projection's) runs the DDL in a scratch schema, then each arr:on and
// arr:batch statement is prepared (which resolves its tables, columns,
// types and ON CONFLICT targets) and explained (which checks the role may
// read and write what it names), as the role. The first failure is an
// *Error naming the statement and its line.
func (e *Engine) Check(ctx context.Context, d *Definition) error {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	suffix := hex.EncodeToString(b)
	g := &guard{name: "check:" + suffix, role: "arrsql_check_" + suffix, timeout: e.cfg.StatementTimeout, limits: e.limits(), shown: projections.Schema(d.Name)}
	schema := "arr_check_" + suffix
	tx, err := e.tx.Begin(ctx)
	if err != nil {
		return fmt.Errorf("checking %s: %w", d.File, err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	if _, err := tx.Exec(ctx, `CREATE SCHEMA `+pgx.Identifier{schema}.Sanitize()); err != nil {
		return fmt.Errorf("checking %s: %w", d.File, err)
	}
	if err := setSearchPath(ctx, tx, schema); err != nil {
		return err
	}
	if err := build(ctx, tx, schema, g, d, nil); err != nil {
		return err
	}
	for _, s := range d.Sections {
		for i, st := range s.Statements {
			what := fmt.Sprintf("%s, statement %d", s.Directive(), i+1)
			name := fmt.Sprintf("arr_check_%d", i)
			text, m := prepared(s, st)
			prefix := "PREPARE " + name + " (" + prepareTypes(s.Batch) + ") AS "
			if err := g.call(ctx, tx, schema, execFn, false, nil, prefix+text); err != nil {
				return d.stmtError(what, st, m, prefix, prefix+text, err)
			}
			nulls := strings.TrimSuffix(strings.Repeat("NULL, ", len(eventNames)), ", ")
			for _, q := range []string{"EXPLAIN EXECUTE " + name + "(" + nulls + ")", "DEALLOCATE " + name} {
				if err := g.call(ctx, tx, schema, execFn, false, nil, q); err != nil {
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

// setSearchPath points unqualified names at schema for the rest of the
// transaction.
func setSearchPath(ctx context.Context, tx pgx.Tx, schema string) error {
	_, err := tx.Exec(ctx, "SELECT pg_catalog.set_config('search_path', $1, true)", pgx.Identifier{schema}.Sanitize())
	return err
}
