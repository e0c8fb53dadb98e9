package sqlproj

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
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
	return nil
}
