package sqlproj

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// roleName is the PostgreSQL role of projection name in the database
// with oid dbOID: roles belong to the whole server, so the name says
// which database's projection it serves.
func roleName(dbOID uint32, name string) string {
	return fmt.Sprintf("arrsql_%d_%s", dbOID, name)
}

// checkRoleName is the scratch role of a check in the database with oid
// dbOID: "__" cannot occur in a projection's name, so no projection's
// role is named so.
func checkRoleName(dbOID uint32, suffix string) string {
	return fmt.Sprintf("arrsql_%d__check_%s", dbOID, suffix)
}

// roleAttributes make a role that can log in (to the sessions arr opens
// as it, one at a time), create nothing outside the schemas it is given
// and inherit nothing.
const roleAttributes = `NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT LOGIN NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 1`

// roleSpec is what ensureRole makes a role.
type roleSpec struct {
	role string
	// projection is the projection whose checkpoint and parked events the
	// role may read and write (row-level security keeps it to their rows,
	// migration 00060); "" for a check's scratch role, which gets none.
	projection string
	// verifier is the role's SCRAM verifier (session.go).
	verifier string
	// validUntil ends the role's logins (a check's scratch role: what a
	// crash leaves cannot be logged in to, and the sweep drops it); zero
	// for never.
	validUntil time.Time
	limits     limits
	timeout    time.Duration
}

// ensureRole creates the role of spec if it does not exist and makes it
// what a projection's role must be, in arr's transaction tx: the
// attributes above, a member of no role, with rights on nothing outside
// this database (a role of the name left by a dropped database whose oid
// this one reuses may keep none), its password, and the limits of its
// sessions set on it (temp_file_limit is a superuser's setting the role
// cannot change; the others it could, and arr bounds them from its side
// too). What PUBLIC may do in this database (PostgreSQL lets every role
// create temporary tables by default, and before version 15 objects in
// public) is revoked from PUBLIC here, once; arr's own user keeps
// creating temporary tables through a grant of its own.
func ensureRole(ctx context.Context, tx pgx.Tx, spec roleSpec) error {
	role := spec.role
	var super, createRole, createDB, repl, bypass, member, elsewhere bool
	err := tx.QueryRow(ctx, `SELECT r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolreplication, r.rolbypassrls,
		EXISTS (SELECT 1 FROM pg_catalog.pg_auth_members m WHERE m.member = r.oid),
		EXISTS (SELECT 1 FROM pg_catalog.pg_shdepend d WHERE d.refclassid = 'pg_catalog.pg_authid'::pg_catalog.regclass AND d.refobjid = r.oid
			AND d.dbid <> (SELECT db.oid FROM pg_catalog.pg_database db WHERE db.datname = pg_catalog.current_database()))
		FROM pg_catalog.pg_roles r WHERE r.rolname = $1`, role).Scan(&super, &createRole, &createDB, &repl, &bypass, &member, &elsewhere)
	id := pgx.Identifier{role}.Sanitize()
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if _, err := tx.Exec(ctx, `CREATE ROLE `+id+` `+roleAttributes); err != nil {
			return fmt.Errorf("creating role %s: %w", role, err)
		}
	case err != nil:
		return fmt.Errorf("reading role %s: %w", role, err)
	case super || createRole || createDB || repl || bypass || member:
		return fmt.Errorf("role %s exists with more than a SQL projection's role may have (superuser, createrole, createdb, replication, bypassrls or membership of a role): drop it and set the projection up again", role)
	case elsewhere:
		return fmt.Errorf("role %s exists and owns or may use something outside this database: drop it and set the projection up again", role)
	}
	until := "infinity"
	if !spec.validUntil.IsZero() {
		until = spec.validUntil.UTC().Format(time.RFC3339)
	}
	var db string
	if err := tx.QueryRow(ctx, `SELECT pg_catalog.current_database()::text`).Scan(&db); err != nil {
		return err
	}
	dbID := pgx.Identifier{db}.Sanitize()
	stmts := append([]string{
		// Superuser, replication and bypassrls were read as off above;
		// only a superuser may name them in ALTER ROLE.
		`ALTER ROLE ` + id + ` NOCREATEDB NOCREATEROLE NOINHERIT LOGIN CONNECTION LIMIT 1 PASSWORD ` + literal(spec.verifier) + ` VALID UNTIL ` + literal(until),
	}, settingStatements(id, dbID, spec.limits, spec.timeout)...)
	// Column-level privileges only, on the tables the role shares with
	// arr: PostgreSQL's LOCK TABLE checks table-level privileges alone, so
	// the role can lock none of them (it would stall every projection,
	// /healthz and /metrics). What it held before is taken first.
	stmts = append(stmts, `REVOKE ALL ON public.projection_checkpoints, public.projection_parked FROM `+id)
	if spec.projection != "" {
		stmts = append(stmts,
			`GRANT SELECT (name, position), UPDATE (position, updated_at) ON public.projection_checkpoints TO `+id,
			`GRANT SELECT (`+parkedColumns+`), INSERT (projection, position, event_id, event_type, error),
				UPDATE (error, attempts, parked_at, retried_at, cleared_at) ON public.projection_parked TO `+id)
	}
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "42501" && strings.Contains(q, "temp_file_limit") {
				return errors.New("arr's database user may not set temp_file_limit, which bounds the disk a SQL projection's session may use: have a superuser run \"GRANT SET ON PARAMETER temp_file_limit TO <arr's user>\" once")
			}
			if strings.Contains(q, "PASSWORD") {
				q = "ALTER ROLE " + id + " … PASSWORD …" // the verifier is nobody's business
			}
			return fmt.Errorf("setting role %s up (%s): %w", role, q, err)
		}
	}
	type privilege struct{ check, fix, what string }
	for _, p := range []privilege{
		{`SELECT pg_catalog.has_database_privilege($1, pg_catalog.current_database(), 'TEMPORARY')`,
			`GRANT TEMPORARY ON DATABASE ` + dbID + ` TO CURRENT_USER; REVOKE TEMPORARY ON DATABASE ` + dbID + ` FROM PUBLIC`,
			"create temporary tables (which would hide arr's own tables in its sessions)"},
		{`SELECT pg_catalog.has_schema_privilege($1, 'public', 'CREATE')`, `REVOKE CREATE ON SCHEMA public FROM PUBLIC`, "create objects in schema public"},
		{`SELECT pg_catalog.has_database_privilege($1, pg_catalog.current_database(), 'CREATE')`, ``, "create schemas"},
	} {
		var has bool
		if err := tx.QueryRow(ctx, p.check, role).Scan(&has); err != nil {
			return fmt.Errorf("checking what role %s may do: %w", role, err)
		}
		if has && p.fix != "" {
			if _, err := tx.Exec(ctx, p.fix); err != nil {
				return fmt.Errorf("keeping role %s from being able to %s: %w", role, p.what, err)
			}
			if err := tx.QueryRow(ctx, p.check, role).Scan(&has); err != nil {
				return err
			}
		}
		if has {
			return fmt.Errorf("role %s could %s (granted to PUBLIC or to it): revoke that, then set the projection up again", role, p.what)
		}
	}
	if err := revokeFunctions(ctx, tx, role); err != nil {
		return err
	}
	if err := lockable(ctx, tx, role); err != nil {
		return err
	}
	return enterable(ctx, tx, role)
}

// parkedColumns are the columns of public.projection_parked a
// projection's role may read (its own rows: row-level security).
const parkedColumns = `projection, position, event_id, event_type, error, attempts, parked_at, retried_at, cleared_at`

// roleSettings are the settings arr puts on a role in this database
// (pg_db_role_setting's form, name=value).
func roleSettings(l limits, timeout time.Duration) []string {
	return []string{
		"temp_file_limit=" + strconv.FormatInt(l.tempFileKB, 10) + "kB",
		"work_mem=" + strconv.FormatInt(l.workMemKB, 10) + "kB",
		"statement_timeout=" + strconv.FormatInt(max(1, timeout.Milliseconds()), 10),
		"idle_in_transaction_session_timeout=" + strconv.FormatInt(max(1000, timeout.Milliseconds()), 10),
	}
}

// settingStatements make roleSettings the only settings of role id (in
// database dbID and in all).
func settingStatements(id, dbID string, l limits, timeout time.Duration) []string {
	inDB := `ALTER ROLE ` + id + ` IN DATABASE ` + dbID + ` `
	stmts := []string{`ALTER ROLE ` + id + ` RESET ALL`, inDB + `RESET ALL`}
	for _, kv := range roleSettings(l, timeout) {
		k, v, _ := strings.Cut(kv, "=")
		stmts = append(stmts, inDB+`SET `+k+` = `+literal(v))
	}
	return stmts
}

// lockable refuses a role with a table-level privilege beyond SELECT on
// a relation it does not own: LOCK TABLE asks for no more than that
// (SELECT gives only ACCESS SHARE, which blocks nothing but ACCESS
// EXCLUSIVE), and REFERENCES or TRIGGER would let its DDL lock the table
// or run code on it.
func lockable(ctx context.Context, tx pgx.Tx, role string) error {
	var tables []string
	rows, err := tx.Query(ctx, `SELECT c.oid::pg_catalog.regclass::pg_catalog.text FROM pg_catalog.pg_class c
		WHERE c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p,v,m,f}') AND c.relnamespace OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace AND c.relowner OPERATOR(pg_catalog.<>) $1::pg_catalog.regrole
		AND pg_catalog.has_table_privilege($1::pg_catalog.text, c.oid, 'INSERT,UPDATE,DELETE,TRUNCATE,REFERENCES,TRIGGER')
		ORDER BY 1 LIMIT 20`, role)
	if err == nil {
		tables, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return fmt.Errorf("checking what role %s may lock: %w", role, err)
	}
	if len(tables) > 0 {
		return fmt.Errorf("role %s holds table-level privileges beyond SELECT on %s (granted to it or to PUBLIC), with which it could lock them: revoke them, then set the projection up again",
			role, strings.Join(tables, ", "))
	}
	return nil
}

// sharedFunctions are the functions a projection's role may run that are
// neither its own nor pg_catalog's core: those of every other schema it
// may use (the extensions' members in public, pg_trgm's and PostGIS's,
// whose C code may not check for interrupts, so a statement in one
// outlives the statement timeout and pg_terminate_backend;
// information_schema's), and the functions of pg_catalog that PostgreSQL
// lets every role run and that reach past a projection's schema: NOTIFY
// on any channel (arr's processes listen on theirs), the advisory locks
// (arr's projections and its head signer hold theirs), large objects
// (disk outside the schema, kept after the projection's transaction) and
// logical decoding messages (WAL). The SQL statement NOTIFY cannot be
// revoked: arr's listeners take notifications as wake-ups only.
const sharedFunctions = `SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) pg_catalog.quote_ident(p.proname)
	OPERATOR(pg_catalog.||) '(' OPERATOR(pg_catalog.||) pg_catalog.pg_get_function_identity_arguments(p.oid) OPERATOR(pg_catalog.||) ')'
FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
WHERE ((n.nspname OPERATOR(pg_catalog.=) 'pg_catalog'
    AND (p.proname OPERATOR(pg_catalog.~) '^pg_(try_)?advisory_'
      OR p.proname OPERATOR(pg_catalog.=) ANY ('{pg_notify,lo_creat,lo_create,lo_from_bytea,lo_import,pg_logical_emit_message}'::pg_catalog.name[])))
  OR (n.nspname OPERATOR(pg_catalog.<>) 'pg_catalog' AND p.proowner OPERATOR(pg_catalog.<>) $1::pg_catalog.regrole
    AND pg_catalog.has_schema_privilege($1::pg_catalog.text, n.oid, 'USAGE')))
  AND pg_catalog.has_function_privilege($1::pg_catalog.text, p.oid, 'EXECUTE')
ORDER BY 1`

// revokeFunctions takes the shared functions from PUBLIC in this database
// (arr's own user keeps them by a grant of its own) and checks that role
// can run none of them.
func revokeFunctions(ctx context.Context, tx pgx.Tx, role string) error {
	granted := func() ([]string, error) {
		rows, err := tx.Query(ctx, sharedFunctions, role)
		if err != nil {
			return nil, fmt.Errorf("checking what role %s may run: %w", role, err)
		}
		return pgx.CollectRows(rows, pgx.RowTo[string])
	}
	fns, err := granted()
	if err != nil || len(fns) == 0 {
		return err
	}
	if _, err := tx.Exec(ctx, RevokeStatements(fns, "CURRENT_USER")); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42501" {
			return fmt.Errorf("role %s could run %d functions that are neither its own nor pg_catalog's (granted to PUBLIC: %s), and arr's database user may not revoke that: have a superuser run scripts/superuser-setup.sql in this database once (after creating the extensions), then set the projection up again",
				role, len(fns), shortList(fns))
		}
		return fmt.Errorf("keeping role %s from running %s: %w", role, shortList(fns), err)
	}
	if fns, err = granted(); err != nil {
		return err
	}
	if len(fns) > 0 {
		return fmt.Errorf("role %s can run %s (granted to it or to PUBLIC), functions outside pg_catalog and its schema: revoke that, then set the projection up again", role, shortList(fns))
	}
	return nil
}

// RevokeStatements are the statements that take functions (qualified
// signatures) from PUBLIC and give them to user.
func RevokeStatements(functions []string, user string) string {
	var b strings.Builder
	for _, f := range functions {
		fmt.Fprintf(&b, "REVOKE EXECUTE ON ROUTINE %s FROM PUBLIC; GRANT EXECUTE ON ROUTINE %s TO %s; ", f, f, user)
	}
	return strings.TrimSuffix(b.String(), " ")
}

// shortList names the first few of fns.
func shortList(fns []string) string {
	if len(fns) <= 5 {
		return strings.Join(fns, ", ")
	}
	return strings.Join(fns[:5], ", ") + fmt.Sprintf(" and %d more", len(fns)-5)
}

// enterable makes sure arr's user may end role's sessions with
// pg_terminate_backend (a superuser may; another user must be a member of
// it, which a user with CREATEROLE may grant itself: the role stays a
// member of nothing) and set temp_file_limit on it, a superuser's
// setting (PostgreSQL 15 lets a superuser grant it: GRANT SET ON
// PARAMETER temp_file_limit).
func enterable(ctx context.Context, tx pgx.Tx, role string) error {
	var super, member bool
	if err := tx.QueryRow(ctx, `SELECT r.rolsuper, pg_catalog.pg_has_role(CURRENT_USER, $1::pg_catalog.text, 'MEMBER')
		FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER`, role).Scan(&super, &member); err != nil {
		return fmt.Errorf("checking arr's database user: %w", err)
	}
	if super {
		return nil
	}
	if !member {
		if _, err := tx.Exec(ctx, `GRANT `+pgx.Identifier{role}.Sanitize()+` TO CURRENT_USER`); err != nil {
			return fmt.Errorf("arr's database user must be a member of %s (to end its sessions past their time): %w", role, err)
		}
	}
	var canSet bool
	if err := tx.QueryRow(ctx, `SELECT pg_catalog.has_parameter_privilege(CURRENT_USER, 'temp_file_limit', 'SET')`).Scan(&canSet); err != nil {
		return fmt.Errorf("checking arr's database user: %w", err)
	}
	if !canSet {
		return errors.New("arr's database user may not set temp_file_limit, which bounds the disk a SQL projection may use: have a superuser run \"GRANT SET ON PARAMETER temp_file_limit TO <arr's user>\" once")
	}
	return nil
}
