package sqlproj

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// Sweep drops the roles of SQL projections that nothing needs any more:
// roles belong to the whole server and outlive their database, and a
// check that crashed leaves its scratch role behind. It drops every role
// named arrsql_<oid>_… whose database (of that oid) no longer exists, and
// this database's check roles whose logins have ended (VALID UNTIL). A
// database created later with a reused oid never meets an old role of
// its name with rights or a password it could use: what the sweep has
// not dropped, ensureRole refuses (rights elsewhere) or takes over (a new
// password, derived from this database's own key). arr sweeps when it
// starts or migrates. It returns the roles dropped and every failure.
func (e *Engine) Sweep(ctx context.Context) (dropped []string, err error) {
	rows, err := e.pool.Query(ctx, `SELECT r.rolname::text, (pg_catalog.substring(r.rolname, '^arrsql_([0-9]+)_')::pg_catalog.oid = $1) AS ours
		FROM pg_catalog.pg_roles r
		WHERE r.rolname ~ '^arrsql_[0-9]+_' AND NOT r.rolsuper AND (
			NOT EXISTS (SELECT 1 FROM pg_catalog.pg_database d WHERE d.oid = pg_catalog.substring(r.rolname, '^arrsql_([0-9]+)_')::pg_catalog.oid)
			OR (r.rolname LIKE $2 AND r.rolvaliduntil < pg_catalog.now()))
		ORDER BY 1`, e.dbOID, "arrsql\\_"+strconv.FormatUint(uint64(e.dbOID), 10)+"\\_\\_check\\_%")
	if err != nil {
		return nil, fmt.Errorf("sweeping the roles of SQL projections: %w", err)
	}
	type stale struct {
		Role string
		Ours bool
	}
	roles, err := pgx.CollectRows(rows, pgx.RowToStructByPos[stale])
	if err != nil {
		return nil, fmt.Errorf("sweeping the roles of SQL projections: %w", err)
	}
	var errs []error
	for _, r := range roles {
		var err error
		if r.Ours {
			err = e.dropRole(ctx, r.Role)
		} else {
			// Its database is gone, and with it what the role owned there.
			if err = e.terminateAll(ctx, e.pool, r.Role); err == nil {
				_, err = e.pool.Exec(ctx, `DROP ROLE IF EXISTS `+pgx.Identifier{r.Role}.Sanitize())
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("dropping role %s: %w", r.Role, err))
			continue
		}
		dropped = append(dropped, r.Role)
	}
	return dropped, errors.Join(errs...)
}
