package sqlproj

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// How analyst SQL runs (docs/sql-projections.md, "Security model"):
//
//   - In a session that logged in as the projection's role (session.go):
//     session_user is the role, which is a member of nothing, so nothing
//     the SQL runs, at any time (in a trigger at commit, a deferred
//     constraint's expression, a type's I/O function), can become anyone
//     but the role. This is what keeps arr's rights from the SQL; what
//     follows is defence in depth, and keeps the projection's own tables
//     sound.
//   - Only through arr's functions of the projection's schema, named with
//     their schema and every argument cast to its exact type, so
//     PostgreSQL can pick no overload; before every call arr checks that
//     the function is still the one it made (owned by the role, PL/pgSQL,
//     no SET clause, the same body) and that the schema holds no object of
//     arr's prefix arr_ that arr did not make and no deferrable trigger,
//     and again after it.
//   - arr's own statements around the call run with search_path
//     pg_catalog alone and name what they use in it.
//   - After the call, deferred triggers fire (SET CONSTRAINTS ALL
//     IMMEDIATE) while the call's time limit still runs; cursors WITH HOLD
//     are closed (CLOSE ALL); RESET ALL undoes the settings the SQL made
//     (the role's own limits, set on the role, are what RESET restores).
//   - Each session serves one transaction and is closed.
type guard struct {
	name    string
	role    string
	timeout time.Duration
	limits  limits
	// shown is the schema errors name, if not the one called (a check's
	// scratch schema stands for the projection's).
	shown string
	// maxBytes bounds what the role's session stores (measure): the
	// schema's relations, the catalog rows of its objects and, if parked,
	// the role's rows of public.projection_parked (a check's scratch role
	// has none, and may not read the table).
	maxBytes int64
	parked   bool
}

// forbidden is a ForbiddenObjectError for objects of schema, if any.
func (g *guard) forbidden(schema string, objects []string) error {
	if len(objects) == 0 {
		return nil
	}
	shown := schema
	if g.shown != "" {
		shown = g.shown
	}
	for i, o := range objects {
		objects[i] = strings.ReplaceAll(o, schema+".", "")
	}
	return &ForbiddenObjectError{Schema: shown, Objects: objects}
}

// limits are the resources one call may use (see Config).
type limits struct {
	tempFileKB int64
	workMemKB  int64
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

// ForbiddenObjectError says a projection's schema holds objects arr does
// not allow there: names that start with arr_ (arr's own, such as an
// overload of one of its functions) that arr did not make, or a
// deferrable trigger (which would run at commit, after arr has left the
// projection's role). arr runs none of the projection's SQL while they are
// there.
type ForbiddenObjectError struct {
	Schema  string
	Objects []string
}

func (e *ForbiddenObjectError) Error() string {
	return fmt.Sprintf("%s holds what a SQL projection may not define: %s (names starting with arr_ are arr's, and a trigger may not be DEFERRABLE); arr runs none of its SQL while they are there",
		e.Schema, strings.Join(e.Objects, ", "))
}

// function is one of arr's functions in a projection's schema: its name,
// its argument types (as to_regprocedure reads them, search_path being
// pg_catalog) and its body.
type function struct {
	name string
	args []string
	body string
}

// sig is f's signature, e.g. arr_exec(text).
func (f function) sig() string { return f.name + "(" + strings.Join(f.args, ",") + ")" }

// call is the statement that calls f of schema with n arguments, each
// cast to its type in pg_catalog: PostgreSQL resolves the name to the
// function of exactly these types, never to an overload.
func (f function) call(schema string) string {
	var b strings.Builder
	b.WriteString("SELECT * FROM " + pgx.Identifier{schema}.Sanitize() + "." + f.name + "(")
	for i, t := range f.args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(i+1) + "::" + qualifiedType(t))
	}
	b.WriteString(")")
	return b.String()
}

// qualifiedType is a type of arr's signatures named in pg_catalog.
func qualifiedType(t string) string {
	base, arr := strings.CutSuffix(t, "[]")
	q, ok := map[string]string{"bigint": "int8", "integer": "int4", "text": "text", "timestamp with time zone": "timestamptz"}[base]
	if !ok {
		panic("sqlproj: no pg_catalog name for type " + t)
	}
	q = "pg_catalog." + q
	if arr {
		q += "[]"
	}
	return q
}

// arrFunctions are the names of the functions arr makes in a projection's
// schema; any other name starting with arr_ there is not arr's.
var arrFunctions = []string{"arr_exec", "arr_query", "arr_apply", "arr_events", "arr_events_paths"}

// forbiddenQuery lists what a projection's schema ($1) must not hold: an
// object named arr_… that arr did not make (a function whose name is not
// one of arr's, or any second function of one of arr's names: an
// overload), and a deferrable trigger that is not PostgreSQL's own (a
// foreign key's). It runs with search_path pg_catalog.
const forbiddenQuery = `WITH ns AS (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = $1)
SELECT coalesce(pg_catalog.array_agg(x ORDER BY x), '{}') FROM (
  SELECT 'function ' || p.proname || '(' || pg_catalog.oidvectortypes(p.proargtypes) || ')' AS x
  FROM pg_catalog.pg_proc p, ns WHERE p.pronamespace = ns.oid AND p.proname LIKE 'arr\_%'
    AND (p.proname <> ALL ($2::pg_catalog.name[])
      OR (SELECT pg_catalog.count(*) FROM pg_catalog.pg_proc q WHERE q.pronamespace = ns.oid AND q.proname = p.proname) > 1)
  UNION ALL SELECT 'relation ' || c.relname FROM pg_catalog.pg_class c, ns WHERE c.relnamespace = ns.oid AND c.relname LIKE 'arr\_%'
  UNION ALL SELECT 'type ' || t.typname FROM pg_catalog.pg_type t, ns WHERE t.typnamespace = ns.oid AND t.typname LIKE 'arr\_%' AND t.typrelid = 0
  UNION ALL SELECT 'deferrable trigger ' || tg.tgname || ' on ' || c.relname
  FROM pg_catalog.pg_trigger tg JOIN pg_catalog.pg_class c ON c.oid = tg.tgrelid, ns
  WHERE c.relnamespace = ns.oid AND tg.tgdeferrable AND NOT tg.tgisinternal
) AS f`

// verifyQuery is forbiddenQuery's list and whether function $3 (a
// signature qualified with the schema) is the one arr made: SECURITY
// DEFINER, owned by role $4, PL/pgSQL, no SET clause, body $5, and
// nobody but its owner may call it (a grant to PUBLIC would let any user
// of the database run SQL as the role).
const verifyQuery = `SELECT (` + forbiddenQuery + `),
  (SELECT p.prosecdef AND p.proconfig IS NULL AND p.prosrc = $5 AND p.probin IS NULL
     AND p.proacl IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_catalog.aclexplode(p.proacl) a WHERE a.grantee <> p.proowner)
     AND p.proowner = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = $4)
     AND p.prolang = (SELECT l.oid FROM pg_catalog.pg_language l WHERE l.lanname = 'plpgsql')
   FROM pg_catalog.pg_proc p WHERE p.oid = pg_catalog.to_regprocedure($3))`

// call runs f of schema with args in tx, a transaction of a session of
// the role, guarded as the comment above says; rows (if not nil) reads
// its result.
func (g *guard) call(ctx context.Context, tx pgx.Tx, schema string, f function, rows func(pgx.Rows) error, args ...any) error {
	// From here on arr's statements see pg_catalog alone.
	var searchPath, syncCommit string
	if err := tx.QueryRow(ctx, `SELECT pg_catalog.current_setting('search_path'), pg_catalog.current_setting('synchronous_commit'),
		pg_catalog.set_config('search_path', 'pg_catalog', true)`).Scan(&searchPath, &syncCommit, nil); err != nil {
		return fmt.Errorf("entering %s: %w", schema, err)
	}
	if current, err := sessionUser(ctx, tx); err != nil || current != g.role {
		return fmt.Errorf("sqlproj: %s's SQL may run only in a session of %s, not of %q (%v)", g.name, g.role, current, err)
	}
	qualified := pgx.Identifier{schema}.Sanitize() + "." + f.sig()
	var forbidden []string
	var ok *bool
	if err := tx.QueryRow(ctx, verifyQuery, schema, arrFunctions, qualified, g.role, f.body).Scan(&forbidden, &ok); err != nil {
		return fmt.Errorf("checking %s: %w", qualified, err)
	}
	if err := g.forbidden(schema, forbidden); err != nil {
		return err
	}
	if ok == nil || !*ok {
		return &FunctionAlteredError{Schema: cmp.Or(g.shown, schema), Function: f.sig()}
	}
	if _, err := tx.Exec(ctx, g.enter(schema)); err != nil {
		return fmt.Errorf("entering %s as %s: %w", schema, g.role, err)
	}
	r, err := tx.Query(ctx, f.call(schema), args...)
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
	// Deferred triggers fire now, within the call's limits. Then no
	// cursor is left to run at commit, and the SQL's settings are undone.
	if _, err := tx.Exec(ctx, `SET CONSTRAINTS ALL IMMEDIATE; CLOSE ALL; RESET ALL; SELECT pg_catalog.set_config('search_path', 'pg_catalog', true)`); err != nil {
		return fmt.Errorf("leaving %s: %w", schema, err)
	}
	if err := tx.QueryRow(ctx, forbiddenQuery, schema, arrFunctions).Scan(&forbidden); err != nil {
		return fmt.Errorf("checking %s: %w", schema, err)
	}
	if err := g.forbidden(schema, forbidden); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `SELECT pg_catalog.set_config('search_path', $1, true), pg_catalog.set_config('synchronous_commit', $2, true)`, searchPath, syncCommit); err != nil {
		return fmt.Errorf("leaving %s: %w", schema, err)
	}
	return nil
}

// sessionUser is the session user of tx's session.
func sessionUser(ctx context.Context, tx pgx.Tx) (string, error) {
	var u string
	err := tx.QueryRow(ctx, `SELECT pg_catalog.session_user()::pg_catalog.text`).Scan(&u)
	return u, err
}

// sizeQuery is the size on disk of schema $1's tables, materialized
// views and sequences, with their indexes and TOAST.
const sizeQuery = `WITH ns AS (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.text),
rel AS (SELECT c.oid, c.relkind, pg_catalog.pg_column_size(c.*) AS size FROM pg_catalog.pg_class c WHERE c.relnamespace OPERATOR(pg_catalog.=) (SELECT oid FROM ns)),
obj AS (
  SELECT oid, size FROM rel
  UNION ALL SELECT p.oid, pg_catalog.pg_column_size(p.*) FROM pg_catalog.pg_proc p WHERE p.pronamespace OPERATOR(pg_catalog.=) (SELECT oid FROM ns)
  UNION ALL SELECT t.oid, pg_catalog.pg_column_size(t.*) FROM pg_catalog.pg_type t WHERE t.typnamespace OPERATOR(pg_catalog.=) (SELECT oid FROM ns)
  UNION ALL SELECT k.oid, pg_catalog.pg_column_size(k.*) FROM pg_catalog.pg_constraint k WHERE k.connamespace OPERATOR(pg_catalog.=) (SELECT oid FROM ns)
  UNION ALL SELECT o.oid, pg_catalog.pg_column_size(o.*) FROM pg_catalog.pg_operator o WHERE o.oprnamespace OPERATOR(pg_catalog.=) (SELECT oid FROM ns)
  UNION ALL SELECT x.oid, pg_catalog.pg_column_size(x.*) FROM pg_catalog.pg_statistic_ext x WHERE x.stxnamespace OPERATOR(pg_catalog.=) (SELECT oid FROM ns)
  UNION ALL SELECT co.oid, pg_catalog.pg_column_size(co.*) FROM pg_catalog.pg_collation co WHERE co.collnamespace OPERATOR(pg_catalog.=) (SELECT oid FROM ns)
  UNION ALL SELECT r.oid, pg_catalog.pg_column_size(r.*) FROM pg_catalog.pg_rewrite r WHERE r.ev_class OPERATOR(pg_catalog.=) ANY (SELECT oid FROM rel)
  UNION ALL SELECT d.oid, pg_catalog.pg_column_size(d.*) FROM pg_catalog.pg_attrdef d WHERE d.adrelid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM rel)
  UNION ALL SELECT tg.oid, pg_catalog.pg_column_size(tg.*) FROM pg_catalog.pg_trigger tg WHERE tg.tgrelid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM rel)
  UNION ALL SELECT pl.oid, pg_catalog.pg_column_size(pl.*) FROM pg_catalog.pg_policy pl WHERE pl.polrelid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM rel)
  UNION ALL SELECT oid, 0 FROM ns)
SELECT (COALESCE((SELECT pg_catalog.sum(pg_catalog.pg_total_relation_size(oid)) FROM rel WHERE relkind OPERATOR(pg_catalog.=) ANY ('{r,m,S}'::pg_catalog."char"[])), 0)
  OPERATOR(pg_catalog.+) COALESCE((SELECT pg_catalog.sum(size) FROM obj), 0)
  OPERATOR(pg_catalog.+) COALESCE((SELECT pg_catalog.sum(pg_catalog.pg_column_size(a.*)) FROM pg_catalog.pg_attribute a WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM rel)), 0)
  OPERATOR(pg_catalog.+) COALESCE((SELECT pg_catalog.sum(pg_catalog.pg_column_size(i.*)) FROM pg_catalog.pg_index i WHERE i.indrelid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM rel)), 0)
  OPERATOR(pg_catalog.+) COALESCE((SELECT pg_catalog.sum(pg_catalog.pg_column_size(ds.*)) FROM pg_catalog.pg_description ds WHERE ds.objoid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM obj)), 0)
  OPERATOR(pg_catalog.+) COALESCE((SELECT pg_catalog.sum(pg_catalog.pg_column_size(dp.*)) FROM pg_catalog.pg_depend dp WHERE dp.objid OPERATOR(pg_catalog.=) ANY (SELECT oid FROM obj)), 0)
  )::pg_catalog.int8`

// parkedSizeQuery is the size of the rows of projection_parked the
// session's role may see (row-level security: its own projection's),
// which it may write itself.
const parkedSizeQuery = `SELECT COALESCE(pg_catalog.sum(pg_catalog.pg_column_size(p.*)), 0)::pg_catalog.int8 FROM public.projection_parked p`

// measure is a DiskLimitError if what the role's session stores, as tx
// sees it, is past the limit: everything it can write, its schema's
// relations, the catalog rows of the schema's objects (comments, function
// bodies, view rules, defaults, constraints, …) and its rows of
// projection_parked.
func (g *guard) measure(ctx context.Context, tx pgx.Tx, schema string) error {
	if g.maxBytes <= 0 {
		return nil
	}
	var size, parked int64
	if err := tx.QueryRow(ctx, sizeQuery, schema).Scan(&size); err != nil {
		return fmt.Errorf("measuring %s: %w", schema, err)
	}
	if g.parked {
		if err := tx.QueryRow(ctx, parkedSizeQuery).Scan(&parked); err != nil {
			return fmt.Errorf("measuring the parked events of %s: %w", schema, err)
		}
		size += parked
	}
	if size > g.maxBytes {
		return &DiskLimitError{Schema: cmp.Or(g.shown, schema), Bytes: size, Limit: g.maxBytes}
	}
	return nil
}

// enter is the statement that sets the call's limits and settings, and
// its schema as search_path (temp_file_limit is set on the role). Its values are arr's own (the
// schema and role names are checked names, quoted), so it is one simple
// query.
func (g *guard) enter(schema string) string {
	set := func(name, value string) string {
		return "pg_catalog.set_config(" + literal(name) + ", " + literal(value) + ", true)"
	}
	settings := []string{
		set("statement_timeout", strconv.FormatInt(max(1, g.timeout.Milliseconds()), 10)),
		set("TimeZone", "UTC"), set("DateStyle", "ISO, MDY"),
		set("plan_cache_mode", "force_generic_plan"),
	}
	if g.limits.workMemKB > 0 {
		settings = append(settings, set("work_mem", strconv.FormatInt(g.limits.workMemKB, 10)+"kB"))
	}
	settings = append(settings, set("search_path", pgx.Identifier{schema}.Sanitize()))
	return "SELECT " + strings.Join(settings, ", ")
}

// literal quotes s as a SQL string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
