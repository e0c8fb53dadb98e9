package sqlproj

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/analysis"
	"github.com/arr-dev/arr/projections"
)

// DefinitionsName is the read model of the SQL projections defined now.
const DefinitionsName = "sql_projections"

// Definitions is the built-in projection of SQLProjectionDefined and
// SQLProjectionDropped: the definitions in force, which the runner
// processes follow (Sync, Watch). The log keeps the history.
type Definitions struct{}

// Spec implements projections.Projection.
func (Definitions) Spec() projections.Spec {
	return projections.Spec{Name: DefinitionsName, DDL: definitionsDDL, Handlers: []projections.Handler{
		projections.On(defined), projections.On(dropped),
	}}
}

const definitionsDDL = `CREATE TABLE definitions (
    name       text        COLLATE "C" PRIMARY KEY,
    sql        text        NOT NULL,
    defined_by text        NOT NULL,
    defined_at timestamptz NOT NULL,
    position   bigint      NOT NULL
);`

func defined(ctx context.Context, tx pgx.Tx, e projections.Event, ev *analysis.SQLProjectionDefined) error {
	_, err := tx.Exec(ctx, `INSERT INTO definitions (name, sql, defined_by, defined_at, position) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (name) DO UPDATE SET sql = EXCLUDED.sql, defined_by = EXCLUDED.defined_by, defined_at = EXCLUDED.defined_at, position = EXCLUDED.position`,
		ev.Name, ev.SQL, ev.DefinedBy, ev.DefinedAt, int64(e.Position))
	return err
}

func dropped(ctx context.Context, tx pgx.Tx, _ projections.Event, ev *analysis.SQLProjectionDropped) error {
	_, err := tx.Exec(ctx, `DELETE FROM definitions WHERE name = $1`, ev.Name)
	return err
}

// Stored is a definition in force.
type Stored struct {
	Name      string    `json:"name"`
	SQL       string    `json:"sql"`
	DefinedBy string    `json:"defined_by"`
	DefinedAt time.Time `json:"defined_at"`
	Position  uint64    `json:"position"`
}

// Defined lists the definitions in force, by name (none if the read
// model is not set up yet).
func (e *Engine) Defined(ctx context.Context) ([]Stored, error) {
	var exists bool
	if err := e.pool.QueryRow(ctx, `SELECT pg_catalog.to_regclass($1) IS NOT NULL`, definitionsTable()).Scan(&exists); err != nil || !exists {
		return nil, err
	}
	rows, err := e.pool.Query(ctx, `SELECT name, sql, defined_by, defined_at, position FROM `+definitionsTable()+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("reading SQL projection definitions: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Stored, error) {
		var s Stored
		var pos int64
		err := r.Scan(&s.Name, &s.SQL, &s.DefinedBy, &s.DefinedAt, &pos)
		s.Position, s.DefinedAt = uint64(pos), s.DefinedAt.UTC()
		return s, err
	})
}

func definitionsTable() string {
	return pgx.Identifier{projections.Schema(DefinitionsName), "definitions"}.Sanitize()
}

// Drop removes what projection name leaves in the database once its
// definition is no longer in force: its live, shadow and retired schemas,
// its checkpoint, parked events and fault, and its role. It holds the
// projection's checkpoint and lock meanwhile, so no batch is applied at
// the same time; if name is defined (again) by then, it removes nothing
// and says so.
func (e *Engine) Drop(ctx context.Context, name string) (dropped bool, err error) {
	g := e.guard(name)
	err = pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		// The checkpoint first: a batch holds it while it runs. The server
		// ends this transaction if it idles for BatchIdle (its process
		// frozen), which frees the checkpoint for the live runner; it is
		// kept busy while the role's session drops the schemas.
		if _, err := tx.Exec(ctx, `SELECT pg_catalog.set_config('idle_in_transaction_session_timeout', $1, true)`,
			strconv.FormatInt(projections.BatchIdle.Milliseconds(), 10)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM public.projection_checkpoints WHERE name = $1 FOR UPDATE`, name); err != nil {
			return err
		}
		var defined bool
		if err := tx.QueryRow(ctx, `SELECT pg_catalog.to_regclass($1) IS NOT NULL`, definitionsTable()).Scan(&defined); err != nil {
			return err
		}
		if defined {
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+definitionsTable()+` WHERE name = $1)`, name).Scan(&defined); err != nil {
				return err
			}
		}
		if defined {
			return nil
		}
		for _, q := range []string{
			`DELETE FROM public.projection_checkpoints WHERE name = $1`,
			`DELETE FROM public.projection_parked WHERE projection = $1`,
			`DELETE FROM public.projection_faults WHERE projection = $1`,
		} {
			if _, err := tx.Exec(ctx, q, name); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		// The schemas go in a session of the role, like every statement
		// on what the analyst made; arr then drops the role in its own.
		live := projections.Schema(name)
		schemas := []string{live, live + "__shadow", live + "__retired"}
		// And the retired schemas a replay renamed aside while a reader
		// held them (projections.Runner.dropRetired).
		rows, err := tx.Query(ctx, `SELECT nspname FROM pg_catalog.pg_namespace WHERE left(nspname, length($1)) = $1`, live+"__retired_")
		if err != nil {
			return err
		}
		aside, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		schemas = append(schemas, aside...)
		// The role's drop commits only while this transaction still holds
		// the checkpoint: KeepAlive is stopped (its failure is the holder's
		// end) and tx asked once more just before the role commits, so a
		// holder the server ended (its process frozen past BatchIdle) or
		// an operator killed leaves the schemas in place.
		stop := projections.KeepAlive(ctx, tx)
		stopped := false
		held := func() error {
			stopped = true
			if err := stop(); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `SELECT 1`)
			return err
		}
		derr := e.dropAsRole(ctx, g.role, schemas, held)
		if !stopped {
			derr = errors.Join(derr, stop())
		}
		if derr != nil {
			return derr
		}
		if err := e.dropRoleTx(ctx, tx, g.role, schemas...); err != nil {
			return err
		}
		dropped = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("dropping SQL projection %s: %w", name, err)
	}
	return dropped, nil
}

// dropAsRole drops schemas, and all they hold, in a session of role:
// arr gives the role those of them that exist (committed, so the role's
// session sees it; its other sessions are ended first: the role has one
// slot), and the role drops them as their owner, whoever made what they
// hold. arr then drops the role in its own session. A role that no
// longer exists has nothing to drop; a crash between the steps leaves
// the role owning its own schemas, which the next drop finishes. The
// role's transaction commits only if held, called just before, succeeds:
// the caller still holds the projection's checkpoint.
func (e *Engine) dropAsRole(ctx context.Context, role string, schemas []string, held func() error) error {
	var exists bool
	var found []string
	if err := e.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) $1),
		(SELECT coalesce(pg_catalog.array_agg(n.nspname::pg_catalog.text ORDER BY n.nspname), '{}') FROM pg_catalog.pg_namespace n
		 WHERE n.nspname OPERATOR(pg_catalog.=) ANY ($2::pg_catalog.text[]))`, role, schemas).Scan(&exists, &found); err != nil {
		return fmt.Errorf("reading role %s: %w", role, err)
	}
	if !exists || len(found) == 0 {
		return nil
	}
	ids := make([]string, len(found))
	for i, s := range found {
		ids[i] = pgx.Identifier{s}.Sanitize()
	}
	rid := pgx.Identifier{role}.Sanitize()
	var give strings.Builder
	for _, id := range ids {
		give.WriteString(`ALTER SCHEMA ` + id + ` OWNER TO ` + rid + `; `)
	}
	if _, err := e.pool.Exec(ctx, give.String()); err != nil {
		return fmt.Errorf("giving %s to %s: %w", strings.Join(found, ", "), role, err)
	}
	if err := e.terminateAll(ctx, e.pool, role); err != nil {
		return fmt.Errorf("ending the sessions of %s: %w", role, err)
	}
	if err := e.asRole(ctx, role, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+strings.Join(ids, ", ")+` CASCADE`); err != nil {
			return err
		}
		if err := held(); err != nil {
			return fmt.Errorf("the drop no longer holds the checkpoint, nothing dropped (run the drop again): %w", err)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("dropping %s as %s: %w", strings.Join(found, ", "), role, err)
	}
	return nil
}
