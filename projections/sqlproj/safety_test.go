package sqlproj_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/sqlproj"
)

const head = "-- arr:projection p\nCREATE TABLE t (a text);\n"

// TestCheckRefuses: what the role may not do is refused when the file is
// checked, with the statement and its line, and the check leaves nothing
// behind.
func TestCheckRefuses(t *testing.T) {
	h := newHarness(t, sqlproj.Config{StatementTimeout: 500 * time.Millisecond})
	if _, err := h.pool.Exec(context.Background(), `CREATE SCHEMA rm_other; CREATE TABLE rm_other.keys (secret text); INSERT INTO rm_other.keys VALUES ('k')`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, src, stmt, want string
		line, col             int
	}{
		{"reading the event log", head + "-- arr:on KeyIssued\nINSERT INTO t SELECT event_type FROM public.events;",
			"arr:on KeyIssued, statement 1", "permission denied for table events", 4, 1},
		{"reading the event log unqualified", head + "-- arr:on KeyIssued\nINSERT INTO t SELECT event_type FROM events;",
			"arr:on KeyIssued, statement 1", `relation "events" does not exist`, 4, 38},
		{"reading the keys", head + "-- arr:batch KeyIssued\nINSERT INTO t SELECT account_id::text FROM public.records_data_keys, :events;",
			"arr:batch KeyIssued, statement 1", "permission denied for table records_data_keys", 4, 1},
		{"reading another read model", head + "-- arr:on KeyIssued\nINSERT INTO t SELECT secret FROM rm_other.keys;",
			"arr:on KeyIssued, statement 1", "permission denied for schema rm_other", 4, 34},
		{"reading another read model in the DDL", head + "CREATE VIEW v AS SELECT * FROM rm_other.keys;\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 2", "permission denied for schema rm_other", 3, 32},
		{"writing another schema", head + "-- arr:on KeyIssued\nINSERT INTO rm_other.keys VALUES (:type);",
			"arr:on KeyIssued, statement 1", "permission denied for schema rm_other", 4, 13},
		{"creating in public", head + "CREATE TABLE public.mine (a int);\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 2", "permission denied for schema public", 3, 14},
		{"creating a schema", head + "CREATE SCHEMA mine;\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 2", "permission denied for database", 3, 1},
		{"a temporary table", head + "CREATE TEMP TABLE projection_checkpoints (name text);\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 2", "permission denied to create temporary tables", 3, 19},
		{"COPY TO PROGRAM", head + "COPY t TO PROGRAM 'id';\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 2", "pg_execute_server_program", 3, 1},
		{"COPY TO a file", head + "COPY t TO '/tmp/arr-sqlproj-test';\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 2", "pg_write_server_files", 3, 1},
		{"SET ROLE", head + "SET ROLE postgres;\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 2", `cannot set parameter "role" within security-definer function`, 3, 1},
		{"RESET ROLE", head + "RESET ROLE;\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 2", `cannot set parameter "role"`, 3, 1},
		{"set_config of role", head + "SELECT set_config('role', 'postgres', false);\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 2", `cannot set parameter "role"`, 3, 1},
		{"SET ROLE in a DO block", head + "DO $$ BEGIN SET ROLE postgres; END $$;\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 2", `cannot set parameter "role"`, 3, 1},
		{"SET SESSION AUTHORIZATION", head + "SET SESSION AUTHORIZATION postgres;\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 2", `cannot set parameter "session_authorization"`, 3, 1},
		{"a function that sets role", head + "CREATE FUNCTION f() RETURNS text LANGUAGE sql SET role = postgres AS $$ SELECT current_user::text $$;\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 2", `cannot set parameter "role"`, 3, 1},
		{"past its time limit", head + "SELECT pg_sleep(30);\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 2", "canceling statement due to statement timeout", 3, 1},
		{"replacing arr's function", head + "CREATE OR REPLACE FUNCTION arr_exec(arr__sql text) RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE arr__sql; END $$;\nCREATE TABLE u (who text DEFAULT current_user);\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 3", "is not the function arr made", 4, 1},
		{"a missing table", head + "-- arr:on KeyIssued\nINSERT INTO tt VALUES (:type);",
			"arr:on KeyIssued, statement 1", `relation "tt" does not exist`, 4, 13},
		{"a missing column", head + "-- arr:on KeyIssued\nUPDATE t SET a = :data->>'x' WHERE b = 1;",
			"arr:on KeyIssued, statement 1", `column "b" does not exist`, 4, 36},
		{"bad SQL", head + "-- arr:on KeyIssued\nINSERT INTO t VALUES (:type) ON CONFLICT (a) DO NOTHING;",
			"arr:on KeyIssued, statement 1", "no unique or exclusion constraint matching the ON CONFLICT", 4, 1},
		{"a syntax error", head + "-- arr:on KeyIssued\nINSERT INTO t VALUS (:type);",
			"arr:on KeyIssued, statement 1", `syntax error at or near "VALUS"`, 4, 15},
		{"a syntax error in the DDL", "-- arr:projection p\nCREATE TABEL t (a text);\n-- arr:on KeyIssued\nDELETE FROM t;",
			"DDL statement 1", `syntax error at or near "TABEL"`, 2, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := h.engine.Parse("p.sql", tc.src)
			if err != nil {
				t.Fatal(err)
			}
			err = h.engine.Check(context.Background(), d)
			var pe *sqlproj.Error
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *sqlproj.Error", err)
			}
			if pe.Statement != tc.stmt || pe.Line != tc.line || pe.Col != tc.col || !strings.Contains(pe.Msg, tc.want) {
				t.Fatalf("got %q (%s at %d:%d), want %q in %s at %d:%d", err, pe.Statement, pe.Line, pe.Col, tc.want, tc.stmt, tc.line, tc.col)
			}
		})
	}
	// Nothing of the checks stayed: no scratch schema, no scratch role
	// (they are committed, so that a session can log in as the role, and
	// dropped after), no file. PUBLIC's right to create temporary tables
	// is revoked for good, as when the first projection is set up.
	var schemas, roles int
	var temp bool
	if err := h.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'arr\_check\_%'),
		(SELECT count(*) FROM pg_roles WHERE rolname LIKE 'arrsql\_' || $1 || '\_\_check\_%'),
		has_database_privilege('public', current_database(), 'TEMPORARY')`, dbOID(t, h.pool)).Scan(&schemas, &roles, &temp); err != nil {
		t.Fatal(err)
	}
	if schemas != 0 || roles != 0 || temp {
		t.Fatalf("the checks left %d schemas, %d roles; PUBLIC may create temporary tables: %v", schemas, roles, temp)
	}
}

// TestRuntimeRefusals: what a check cannot see (SQL inside a function the
// DDL made) is refused when the projection runs: the events are parked
// with the database's refusal, nothing they would have written is there,
// and the projection moves on.
func TestRuntimeRefusals(t *testing.T) {
	h := newHarness(t, sqlproj.Config{StatementTimeout: 2 * time.Second})
	p := h.define(t, `-- arr:projection sneaky
CREATE TABLE t (a text);
CREATE FUNCTION try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE q INTO r;
  RETURN r;
END $$;
-- arr:on CompletionRecorded
INSERT INTO t SELECT try(:data->'payload'->>'q');
`)
	ctx := context.Background()
	for _, q := range []string{
		"SELECT count(*)::text FROM public.events",
		"SELECT set_config('role', 'postgres', true)",
		"SELECT sql FROM rm_sql_projections.definitions LIMIT 1",
		"COPY (SELECT 1) TO PROGRAM 'id'",
	} {
		h.probe(t, q)
	}
	last := h.probe(t, "SELECT 'fine'")
	// ParkAfter is 1: the failing batch is tried once, then event by
	// event.
	for range 3 {
		if _, _, err := h.runner.Step(ctx, p.Name); err == nil {
			break
		}
	}
	h.waitFor(t, p.Name, last)
	page, err := projections.ListParked(ctx, h.pool, projections.ParkedQuery{Projection: p.Name})
	if err != nil {
		t.Fatal(err)
	}
	parked := page.Events
	want := []string{"permission denied for table events", `cannot set parameter "role" within security-definer function`,
		"permission denied for schema rm_sql_projections", "pg_execute_server_program"}
	if len(parked) != len(want) {
		t.Fatalf("parked %+v, want %d events", parked, len(want))
	}
	for i, pe := range parked {
		if !strings.Contains(pe.Error, want[i]) || !strings.Contains(pe.Error, "sneaky.sql:10:1: arr:on CompletionRecorded, statement 1") {
			t.Errorf("parked %d: %q, want %q at sneaky.sql:10:1", pe.Position, pe.Error, want[i])
		}
	}
	res := h.query(t, p.Name, "SELECT a FROM t")
	if len(res.Rows) != 1 || sqlproj.Text(res.Rows[0][0]) != "fine" {
		t.Fatalf("rows %v, want only the fine one", res.Rows)
	}
}

// TestAlteringArrsFunction: SQL that makes arr_apply SECURITY INVOKER (so
// that arr's next call would run it as arr's own user) is caught before
// that call: the function is never run again, and everything it ran ran
// as the projection's role.
func TestAlteringArrsFunction(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	p := h.define(t, `-- arr:projection turncoat
CREATE TABLE who (name text);
CREATE FUNCTION turn() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'ALTER FUNCTION arr_apply(bigint[],text[],text[],bigint[],integer[],timestamptz[],text,text,text[]) SECURITY INVOKER';
  RETURN current_user::text;
END $$;
-- arr:on CompletionRecorded
INSERT INTO who SELECT turn();
`)
	ctx := context.Background()
	first := h.probe(t, "")
	h.waitFor(t, p.Name, first)
	h.probe(t, "")
	_, _, err := h.runner.Step(ctx, p.Name)
	var alt *sqlproj.FunctionAlteredError
	if !errors.As(err, &alt) {
		t.Fatalf("the step after the alteration: %v, want a FunctionAlteredError", err)
	}
	var who []string
	rows, err := h.pool.Query(ctx, `SELECT name FROM `+pgx.Identifier{projections.Schema(p.Name), "who"}.Sanitize())
	if err != nil {
		t.Fatal(err)
	}
	if who, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if len(who) != 1 || who[0] != h.engine.Role(p.Name) {
		t.Fatalf("ran as %v, want once as %s", who, h.engine.Role(p.Name))
	}
}

// TestRoleReadsNothingElse: the role may read or write no table, view or
// sequence outside its schema (PostGIS's public reference tables aside,
// and its own rows of projection_parked and projection_checkpoints, which
// TestSessionsOfTheRole tries), create in no other schema, and is no more
// than LOGIN NOINHERIT with one connection.
func TestRoleReadsNothingElse(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	p := h.define(t, spendSQL(t))
	if _, err := h.pool.Exec(context.Background(), `CREATE SCHEMA rm_other; CREATE TABLE rm_other.keys (secret text)`); err != nil {
		t.Fatal(err)
	}
	role := h.engine.Role(p.Name)
	rows, err := h.pool.Query(context.Background(), `SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f', 'S') AND n.nspname NOT IN ('pg_catalog', 'information_schema', $2)
		AND c.relname NOT IN ('spatial_ref_sys', 'geometry_columns', 'geography_columns')
		AND NOT (n.nspname = 'public' AND c.relname IN ('projection_parked', 'projection_checkpoints') AND c.relrowsecurity)
		AND (has_table_privilege($1, c.oid, 'SELECT') OR has_table_privilege($1, c.oid, 'INSERT') OR has_table_privilege($1, c.oid, 'UPDATE')
		  OR has_table_privilege($1, c.oid, 'DELETE') OR has_table_privilege($1, c.oid, 'TRUNCATE'))
		UNION ALL SELECT 'schema ' || nspname FROM pg_namespace WHERE nspname <> $2 AND has_schema_privilege($1, oid, 'CREATE')
		UNION ALL SELECT 'schema usage ' || nspname FROM pg_namespace WHERE nspname LIKE 'rm\_%' AND nspname <> $2 AND has_schema_privilege($1, oid, 'USAGE')
		UNION ALL SELECT 'attributes' FROM pg_roles WHERE rolname = $1 AND (rolsuper OR rolinherit OR rolcreaterole OR rolcreatedb OR NOT rolcanlogin OR rolconnlimit <> 1 OR rolreplication OR rolbypassrls)
		UNION ALL SELECT 'membership of ' || m.roleid::regrole::text FROM pg_auth_members m WHERE m.member = $1::regrole
		UNION ALL SELECT 'temporary tables' WHERE has_database_privilege($1, current_database(), 'TEMPORARY')`, role, projections.Schema(p.Name))
	if err != nil {
		t.Fatal(err)
	}
	may, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(may) > 0 {
		t.Fatalf("role %s may reach %v", role, may)
	}
}

// TestBatchOverTime: a batch that runs past the statement timeout is
// cancelled and rolled back; the projection does not advance (and is not
// parked: a timeout says nothing about the events).
func TestBatchOverTime(t *testing.T) {
	h := newHarness(t, sqlproj.Config{StatementTimeout: 300 * time.Millisecond})
	p := h.define(t, head+"-- arr:on CompletionRecorded\nINSERT INTO t SELECT 'slept' FROM pg_sleep((:data->'payload'->>'q')::float);")
	ctx := context.Background()
	before := h.probe(t, "0")
	h.waitFor(t, p.Name, before)
	h.probe(t, "5")
	for range 3 {
		_, n, err := h.runner.Step(ctx, p.Name)
		if err == nil || !strings.Contains(err.Error(), "canceling statement due to statement timeout") || n != 0 {
			t.Fatalf("step: %d applied, %v; want the statement timeout", n, err)
		}
	}
	var pos int64
	if err := h.pool.QueryRow(ctx, `SELECT position FROM projection_checkpoints WHERE name = $1`, p.Name).Scan(&pos); err != nil {
		t.Fatal(err)
	}
	parked, err := projections.CountParked(ctx, h.pool, p.Name)
	if err != nil || uint64(pos) != before || parked != 0 {
		t.Fatalf("checkpoint %d (want %d), %d parked %v", pos, before, parked, err)
	}
}

// TestQueryIsReadOnly: a query runs in a READ ONLY transaction as the
// role: it cannot write, even through a function of the projection's.
func TestQueryIsReadOnly(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	p := h.define(t, head+"CREATE FUNCTION bump() RETURNS int LANGUAGE sql AS $$ INSERT INTO t VALUES ('x') RETURNING 1 $$;\n-- arr:on KeyIssued\nDELETE FROM t;")
	for q, want := range map[string]string{
		"SELECT bump()":                          "cannot execute INSERT in a read-only transaction",
		"SELECT count(*) FROM public.events":     "permission denied for table events",
		"SELECT current_user::text, 1; SELECT 2": "syntax error",
	} {
		_, err := h.engine.Query(context.Background(), p.Name, q)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("query %q: %v, want %q", q, err, want)
		}
	}
	res := h.query(t, p.Name, "SELECT current_user::text AS who, 1 AS one, 1 AS one -- a comment")
	if len(res.Columns) != 3 || sqlproj.Text(res.Rows[0][0]) != h.engine.Role(p.Name) || string(res.Objects()[0]) != `{"who":"`+h.engine.Role(p.Name)+`","one":1}` {
		t.Fatalf("got %v %s %s", res.Columns, res.Rows, res.Objects())
	}
}

// TestGrantingArrsFunction: a projection whose SQL lets others call one
// of arr's functions (which would let any user of the database run SQL
// as its role) is called no more.
func TestGrantingArrsFunction(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	src := "-- arr:projection grants\nCREATE TABLE t (a text);\nGRANT EXECUTE ON FUNCTION arr_exec(text) TO PUBLIC;\nCREATE TABLE u (a text);\n-- arr:on KeyIssued\nINSERT INTO t VALUES (:type);\n"
	d, err := h.engine.Parse("grants.sql", src)
	if err != nil {
		t.Fatal(err)
	}
	err = h.engine.Check(context.Background(), d)
	var altered *sqlproj.FunctionAlteredError
	if !errors.As(err, &altered) || !strings.Contains(err.Error(), "DDL statement 3") {
		t.Fatalf("check: %v; want arr_exec refused at the statement after the grant", err)
	}
}
