package sqlproj

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// roleName is the PostgreSQL role of projection name in the database
// with oid dbOID: roles belong to the whole server, so the name says
// which database's projection it serves.
func roleName(dbOID uint32, name string) string {
	return fmt.Sprintf("arrsql_%d_%s", dbOID, name)
}

// roleAttributes creates a role that can log in to nothing, create
// nothing outside the schemas it is given and inherit nothing.
const roleAttributes = `NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOLOGIN NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 0`

// ensureRole creates role if it does not exist and checks that it is what
// a projection's role must be: none of the attributes above granted, a
// member of no role, and unable to create temporary tables, schemas or
// objects in public. What PUBLIC may do in this database (PostgreSQL lets
// every role create temporary tables by default, and before version 15
// objects in public) is revoked from PUBLIC here, once; arr's own user
// keeps creating temporary tables through a grant of its own.
func ensureRole(ctx context.Context, tx pgx.Tx, role string) error {
	var super, inherit, createRole, createDB, login, repl, bypass, member bool
	err := tx.QueryRow(ctx, `SELECT r.rolsuper, r.rolinherit, r.rolcreaterole, r.rolcreatedb, r.rolcanlogin, r.rolreplication, r.rolbypassrls,
		EXISTS (SELECT 1 FROM pg_catalog.pg_auth_members m WHERE m.member = r.oid)
		FROM pg_catalog.pg_roles r WHERE r.rolname = $1`, role).Scan(&super, &inherit, &createRole, &createDB, &login, &repl, &bypass, &member)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if _, err := tx.Exec(ctx, `CREATE ROLE `+pgx.Identifier{role}.Sanitize()+` `+roleAttributes); err != nil {
			return fmt.Errorf("creating role %s: %w", role, err)
		}
	case err != nil:
		return fmt.Errorf("reading role %s: %w", role, err)
	case super || inherit || createRole || createDB || login || repl || bypass || member:
		return fmt.Errorf("role %s exists with more than a SQL projection's role may have (superuser, inherit, createrole, createdb, login, replication, bypassrls or membership of a role): drop it and set the projection up again", role)
	}
	type privilege struct{ check, fix, what string }
	var db string
	if err := tx.QueryRow(ctx, `SELECT pg_catalog.current_database()::text`).Scan(&db); err != nil {
		return err
	}
	dbID := pgx.Identifier{db}.Sanitize()
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
	return enterable(ctx, tx, role)
}

// shared are the functions of pg_catalog that PostgreSQL lets every role
// run and that reach past a projection's schema: NOTIFY on any channel
// (arr's processes listen on theirs), the advisory locks (arr's
// projections and its head signer hold theirs), large objects (disk
// outside the schema, kept after the projection's transaction) and
// logical decoding messages (WAL). The SQL statement NOTIFY cannot be
// revoked: arr's listeners take notifications as wake-ups only.
const sharedFunctions = `SELECT p.oid::pg_catalog.regprocedure::pg_catalog.text FROM pg_catalog.pg_proc p
WHERE p.pronamespace OPERATOR(pg_catalog.=) 'pg_catalog'::pg_catalog.regnamespace
  AND (p.proname OPERATOR(pg_catalog.~) '^pg_(try_)?advisory_'
    OR p.proname OPERATOR(pg_catalog.=) ANY ('{pg_notify,lo_creat,lo_create,lo_from_bytea,lo_import,pg_logical_emit_message}'::pg_catalog.name[]))
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
			return fmt.Errorf("role %s could run %s (granted to PUBLIC), and arr's database user may not revoke that: have a superuser run %q in this database once, then set the projection up again",
				role, strings.Join(fns, ", "), RevokeStatements(fns, "<arr's user>"))
		}
		return fmt.Errorf("keeping role %s from running %s: %w", role, strings.Join(fns, ", "), err)
	}
	if fns, err = granted(); err != nil {
		return err
	}
	if len(fns) > 0 {
		return fmt.Errorf("role %s can run %s (granted to it or to PUBLIC): revoke that, then set the projection up again", role, strings.Join(fns, ", "))
	}
	return nil
}

// RevokeStatements are the statements that take functions (signatures of
// pg_catalog) from PUBLIC and give them to user.
func RevokeStatements(functions []string, user string) string {
	var b strings.Builder
	for _, f := range functions {
		fmt.Fprintf(&b, "REVOKE EXECUTE ON FUNCTION pg_catalog.%s FROM PUBLIC; GRANT EXECUTE ON FUNCTION pg_catalog.%s TO %s; ", f, f, user)
	}
	return strings.TrimSuffix(b.String(), " ")
}

// enterable makes sure arr's user may SET ROLE to role (a superuser may;
// another user must be a member of it, which a user with CREATEROLE may
// grant itself) and set temp_file_limit, a superuser's setting (PostgreSQL
// 15 lets a superuser grant it: GRANT SET ON PARAMETER temp_file_limit).
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
			return fmt.Errorf("arr's database user must be able to SET ROLE %s (to run the projection's SQL as it): %w", role, err)
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
