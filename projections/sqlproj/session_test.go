package sqlproj_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/domain/analysis"
	"github.com/arr-dev/arr/projections"
	"github.com/arr-dev/arr/projections/sqlproj"
)

// loginAs connects to h's database as role, with the password arr
// derives for it.
func (h *harness) loginAs(t *testing.T, role string) (*pgx.Conn, error) {
	t.Helper()
	ctx := context.Background()
	pw, err := sqlproj.RolePassword(ctx, h.engine, role)
	if err != nil {
		t.Fatal(err)
	}
	cc := h.pool.Config().ConnConfig.Copy()
	cc.User, cc.Password = role, pw
	return pgx.ConnectConfig(ctx, cc)
}

// waitLogin is loginAs once the role's one session is free (a session
// arr closed ends a moment later).
func (h *harness) waitLogin(t *testing.T, role string) *pgx.Conn {
	t.Helper()
	for range 100 {
		conn, err := h.loginAs(t, role)
		if err == nil {
			return conn
		}
		if !strings.Contains(err.Error(), "too many connections for role") {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no session of %s for 5s", role)
	return nil
}

// TestSessionsOfTheRole: a projection's SQL runs in sessions whose
// session user is its role; such a session reaches only its own rows of
// the runner's tables, cannot change the limits set on the role (for
// this session or the next), and there is one at a time.
func TestSessionsOfTheRole(t *testing.T) {
	h := newHarness(t, sqlproj.Config{TempFileLimit: 3 << 20})
	p := h.define(t, head+"CREATE TABLE who (cur text, sess text);\nCREATE FUNCTION note() RETURNS void LANGUAGE sql AS $$ INSERT INTO who VALUES (current_user, session_user) $$;\n"+
		"-- arr:on CompletionRecorded\nINSERT INTO t SELECT note()::text;\n")
	h.define(t, strings.Replace(head, "-- arr:projection p", "-- arr:projection other", 1)+"-- arr:on CompletionRecorded\nINSERT INTO t VALUES (:type);\n")
	ctx := context.Background()
	h.waitFor(t, p.Name, h.probe(t, ""))
	role := h.engine.Role(p.Name)
	res := h.query(t, p.Name, "SELECT cur, sess, current_user AS q_cur, session_user AS q_sess FROM who")
	if len(res.Rows) != 1 {
		t.Fatalf("who: %v", res.Rows)
	}
	for i, v := range res.Rows[0] {
		if sqlproj.Text(v) != role {
			t.Errorf("%s is %s, want %s", res.Columns[i], v, role)
		}
	}

	conn := h.waitLogin(t, role)
	defer conn.Close(ctx)
	// One session at a time.
	if second, err := h.loginAs(t, role); err == nil {
		second.Close(ctx)
		t.Fatal("a second session of the role logged in")
	} else if !strings.Contains(err.Error(), "too many connections for role") {
		t.Fatalf("a second session: %v, want too many connections", err)
	}
	var rows []string
	r, err := conn.Query(ctx, `SELECT name FROM public.projection_checkpoints ORDER BY name`)
	if err == nil {
		rows, err = pgx.CollectRows(r, pgx.RowTo[string])
	}
	if err != nil || len(rows) != 1 || rows[0] != p.Name {
		t.Fatalf("the role sees checkpoints %v (%v), want only its own", rows, err)
	}
	for _, tc := range []struct{ q, want string }{
		{`UPDATE public.projection_checkpoints SET position = 0 WHERE name = 'other'`, "UPDATE 0"},
		{`UPDATE public.projection_checkpoints SET name = 'other' WHERE name = 'p'`, "permission denied"},
		{`INSERT INTO public.projection_parked (projection, position, event_id, event_type, error) VALUES ('other', 1, gen_random_uuid(), 'x', 'x')`, "row-level security"},
		{`DELETE FROM public.projection_checkpoints`, "permission denied"},
		{`SELECT * FROM public.sql_projection_role_key`, "permission denied"},
		{`SET temp_file_limit = '1GB'`, "permission denied"},
		{`RESET temp_file_limit`, "permission denied"},
		{`ALTER ROLE CURRENT_USER SET temp_file_limit = '1GB'`, "permission denied"},
		{`ALTER ROLE CURRENT_USER IN DATABASE ` + dbName(t, h) + ` RESET temp_file_limit`, "permission denied"},
		{`ALTER ROLE CURRENT_USER IN DATABASE ` + dbName(t, h) + ` SET temp_file_limit = -1`, "permission denied"},
		{`ALTER ROLE CURRENT_USER CONNECTION LIMIT 5`, "permission denied"},
		{`ALTER ROLE CURRENT_USER RESET ALL`, ""},
		{`ALTER ROLE CURRENT_USER IN DATABASE ` + dbName(t, h) + ` RESET ALL`, ""},
		{`SET ROLE postgres`, "permission denied"},
		{`SET SESSION AUTHORIZATION postgres`, "permission denied"},
		{`CREATE TEMP TABLE x (a int)`, "permission denied"},
		{`SELECT pg_terminate_backend(pg_backend_pid() + 1)`, ""},
	} {
		tag, err := conn.Exec(ctx, tc.q)
		switch {
		case tc.want == "" && err != nil && !strings.Contains(err.Error(), "permission denied"):
			t.Errorf("%s: %v", tc.q, err)
		case tc.want == "UPDATE 0" && (err != nil || tag.String() != "UPDATE 0"):
			t.Errorf("%s: %v %v, want no row updated", tc.q, tag, err)
		case tc.want != "" && tc.want != "UPDATE 0" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.q, err, tc.want)
		}
	}
	conn.Close(ctx)
	// What the session tried changed nothing for the next.
	next := h.waitLogin(t, role)
	defer next.Close(ctx)
	var limit string
	var conns int
	if err := next.QueryRow(ctx, `SELECT current_setting('temp_file_limit'), (SELECT rolconnlimit FROM pg_roles WHERE rolname = current_user)`).Scan(&limit, &conns); err != nil {
		t.Fatal(err)
	}
	if limit != "3MB" || conns != 1 {
		t.Fatalf("the next session has temp_file_limit %s and the role a connection limit of %d, want 3MB and 1", limit, conns)
	}
}

// TestAnalystCannotOutlastItsTimeout: a statement that traps the
// cancel of its statement timeout (and sets the timeout off) while it
// grows a PL/pgSQL variable, which work_mem does not bound, is ended by
// arr from its own session (pg_terminate_backend) once the timeout and a
// grace have passed: the batch fails, the role's backend is gone, the
// projection has not moved.
func TestAnalystCannotOutlastItsTimeout(t *testing.T) {
	h := newHarness(t, sqlproj.Config{StatementTimeout: 300 * time.Millisecond})
	p := h.define(t, head+`CREATE FUNCTION hog() RETURNS text LANGUAGE plpgsql AS $$
DECLARE s text := '';
BEGIN
  PERFORM set_config('statement_timeout', '0', false);
  LOOP
    BEGIN
      s := s || repeat(md5(random()::text), 100000);
      IF length(s) > 200000000 THEN s := ''; END IF;
    EXCEPTION WHEN query_canceled THEN NULL;
    END;
  END LOOP;
END $$;
-- arr:on CompletionRecorded
INSERT INTO t SELECT hog() WHERE :data->'payload'->>'q' = 'hog';
`)
	ctx := context.Background()
	before := h.probe(t, "")
	h.waitFor(t, p.Name, before)
	h.probe(t, "hog")
	role := h.engine.Role(p.Name)
	// The peak memory of the role's backend while it runs (VmHWM).
	var peakKiB int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			var pid int32
			if err := h.pool.QueryRow(ctx, `SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE usename = $1`, role).Scan(&pid); err == nil && pid > 0 {
				if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
					for _, line := range strings.Split(string(b), "\n") {
						if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
							var kib int64
							fmt.Sscan(f[1], &kib)
							peakKiB = max(peakKiB, kib)
						}
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	_, n, err := h.runner.Step(ctx, p.Name)
	took := time.Since(start)
	close(done)
	<-sampled
	if err == nil || n != 0 {
		t.Fatalf("step: %d applied, %v; want it ended", n, err)
	}
	if took > 20*time.Second {
		t.Fatalf("the step took %s", took)
	}
	var left int
	for range 50 {
		if err := h.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE usename = $1`, role).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if left != 0 {
		t.Fatalf("%d sessions of %s still run", left, role)
	}
	var pos int64
	if err := h.pool.QueryRow(ctx, `SELECT position FROM projection_checkpoints WHERE name = $1`, p.Name).Scan(&pos); err != nil || uint64(pos) != before {
		t.Fatalf("checkpoint %d (%v), want %d", pos, err, before)
	}
	t.Logf("ended after %s (timeout 300ms); the backend's peak memory was %d MiB; error: %v", took.Round(time.Millisecond), peakKiB>>10, err)
}

// TestDiskLimit: a projection whose tables grow past Config.MaxBytes has
// the batch that took them there rolled back and stops (ErrStopped, not
// parked); a definition whose DDL alone goes past it is refused.
func TestDiskLimit(t *testing.T) {
	h := newHarness(t, sqlproj.Config{MaxBytes: 1 << 20})
	p := h.define(t, head+"-- arr:on CompletionRecorded\nINSERT INTO t SELECT md5(g::text || :position) FROM generate_series(1, (:data->'payload'->>'q')::int) g;\n")
	ctx := context.Background()
	small := h.probe(t, "100")
	h.waitFor(t, p.Name, small)
	h.probe(t, "30000") // 30,000 rows of 33 bytes and more
	_, n, err := h.runner.Step(ctx, p.Name)
	var dl *sqlproj.DiskLimitError
	if !errors.As(err, &dl) || !errors.Is(err, projections.ErrStopped) || n != 0 || !strings.Contains(err.Error(), "past its limit of 1.0 MiB") {
		t.Fatalf("step: %d applied, %v; want a DiskLimitError", n, err)
	}
	if res := h.query(t, p.Name, "SELECT count(*) FROM t"); sqlproj.Text(res.Rows[0][0]) != "100" {
		t.Fatalf("t holds %s rows, want the first event's 100", res.Rows[0][0])
	}
	parked, err := projections.CountParked(ctx, h.pool, p.Name)
	if err != nil || parked != 0 {
		t.Fatalf("%d parked (%v)", parked, err)
	}
	d, err := h.engine.Parse("big.sql", "-- arr:projection big\nCREATE TABLE t (a text);\nINSERT INTO t SELECT md5(g::text) FROM generate_series(1, 50000) g;\n-- arr:on KeyIssued\nDELETE FROM t;\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.engine.Check(ctx, d); !errors.As(err, &dl) || !strings.Contains(err.Error(), "big.sql:3:1: DDL statement 2") {
		t.Fatalf("check: %v; want the DDL refused past the limit", err)
	}
}

// TestDropRemovesTheRole: dropping a projection drops its role, and a
// failed check leaves no role; Sweep drops a role whose database is
// gone.
func TestDropRemovesTheRole(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	ctx := context.Background()
	p := h.define(t, spendSQL(t))
	role := h.engine.Role(p.Name)
	h.appendEvent(t, analysis.StreamID(p.Name), &analysis.SQLProjectionDropped{Name: p.Name, DroppedBy: "test", DroppedAt: time.Now()})
	h.waitFor(t, sqlproj.DefinitionsName, mustHead(t, h))
	h.runner.Remove(p.Name)
	if ok, err := h.engine.Drop(ctx, p.Name); err != nil || !ok {
		t.Fatalf("drop: %v %v", ok, err)
	}
	if n := roleCount(t, h, role); n != 0 {
		t.Fatalf("role %s outlived its projection", role)
	}
	// A role of a database that no longer exists: one is made, given a
	// role named for its oid, and dropped.
	gone := fmt.Sprintf("arr_gone_%d", time.Now().UnixNano())
	if _, err := h.pool.Exec(ctx, `CREATE DATABASE `+gone+` TEMPLATE template0`); err != nil {
		t.Fatal(err)
	}
	var oid uint32
	if err := h.pool.QueryRow(ctx, `SELECT oid FROM pg_database WHERE datname = $1`, gone).Scan(&oid); err != nil {
		t.Fatal(err)
	}
	orphan := fmt.Sprintf("arrsql_%d_gone", oid)
	if _, err := h.pool.Exec(ctx, `CREATE ROLE `+orphan+` LOGIN`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.pool.Exec(ctx, `DROP DATABASE `+gone); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = h.pool.Exec(context.Background(), `DROP ROLE IF EXISTS `+orphan) })
	dropped, err := h.engine.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(dropped, " "), orphan) || roleCount(t, h, orphan) != 0 {
		t.Fatalf("the sweep dropped %v, want %s among them", dropped, orphan)
	}
}

func dbName(t *testing.T, h *harness) string {
	t.Helper()
	var db string
	if err := h.pool.QueryRow(context.Background(), `SELECT quote_ident(current_database())`).Scan(&db); err != nil {
		t.Fatal(err)
	}
	return db
}

func roleCount(t *testing.T, h *harness, role string) int {
	t.Helper()
	var n int
	if err := h.pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_roles WHERE rolname = $1`, role).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func mustHead(t *testing.T, h *harness) uint64 {
	t.Helper()
	head, err := h.store.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return head
}

// TestARoleLeftBehindIsNotInherited: a role of a projection's name that
// a dropped database left (whose oid this one reuses) keeps neither its
// password nor its settings when arr sets the projection up; one with a
// right outside this database is refused.
func TestARoleLeftBehindIsNotInherited(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	ctx := context.Background()
	role := h.engine.Role("reused")
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN PASSWORD 'left-behind'`,
		`ALTER ROLE ` + role + ` SET work_mem = '1GB'`,
	} {
		if _, err := h.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var before string
	if err := h.pool.QueryRow(ctx, `SELECT rolpassword FROM pg_authid WHERE rolname = $1`, role).Scan(&before); err != nil {
		t.Fatal(err)
	}
	h.define(t, strings.Replace(spendSQL(t), "spend_by_model", "reused", 1))
	var after string
	var settings int
	if err := h.pool.QueryRow(ctx, `SELECT rolpassword, (SELECT count(*) FROM pg_db_role_setting s WHERE s.setrole = a.oid AND s.setdatabase = 0)
		FROM pg_authid a WHERE rolname = $1`, role).Scan(&after, &settings); err != nil {
		t.Fatal(err)
	}
	if after == before || !strings.HasPrefix(after, "SCRAM-SHA-256$4096:") || settings != 0 {
		t.Fatalf("the role kept its password (%v) or its settings (%d)", after == before, settings)
	}
	// A right elsewhere: CONNECT on another database.
	other := h.engine.Role("elsewhere")
	if _, err := h.pool.Exec(ctx, `CREATE ROLE `+other+` LOGIN; GRANT CONNECT ON DATABASE postgres TO `+other); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = h.pool.Exec(context.Background(), `REVOKE CONNECT ON DATABASE postgres FROM `+other+`; DROP ROLE IF EXISTS `+other)
	})
	d, err := h.engine.Parse("elsewhere.sql", strings.Replace(spendSQL(t), "spend_by_model", "elsewhere", 1))
	if err != nil {
		t.Fatal(err)
	}
	err = h.runner.Add(ctx, h.engine.Projection(d), true)
	if err == nil || !strings.Contains(err.Error(), "outside this database") {
		t.Fatalf("setting up elsewhere: %v; want the role refused", err)
	}
}

// TestTheRoleCanLockNothingItShares: a projection's role holds only
// column-level privileges on the tables it shares with arr, so LOCK TABLE
// (which checks table-level privileges) is refused on every table outside
// its schema, in every mode but ACCESS SHARE (SELECT, which blocks only
// ACCESS EXCLUSIVE, on tables PUBLIC may read); it deletes no parked row,
// and runs no function of another schema (pg_trgm's).
func TestTheRoleCanLockNothingItShares(t *testing.T) {
	h := newHarness(t, sqlproj.Config{})
	p := h.define(t, head+"-- arr:on CompletionRecorded\nINSERT INTO t VALUES (:type);\n")
	ctx := context.Background()
	h.waitFor(t, p.Name, h.probe(t, ""))
	role := h.engine.Role(p.Name)
	rows, err := h.pool.Query(ctx, `SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p', 'v', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast', $1) ORDER BY 1`, projections.Schema(p.Name))
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) == 0 {
		t.Fatalf("tables: %v %v", tables, err)
	}
	conn := h.waitLogin(t, role)
	defer conn.Close(ctx)
	tried := 0
	for _, table := range tables {
		for _, mode := range []string{"ROW SHARE", "ROW EXCLUSIVE", "SHARE UPDATE EXCLUSIVE", "SHARE", "SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"} {
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tx.Exec(ctx, `LOCK TABLE `+table+` IN `+mode+` MODE NOWAIT`)
			_ = tx.Rollback(ctx)
			tried++
			if err == nil || !strings.Contains(err.Error(), "permission denied") {
				t.Errorf("LOCK TABLE %s IN %s MODE as the role: %v, want permission denied", table, mode, err)
			}
		}
	}
	for _, q := range []string{
		`DELETE FROM public.projection_parked`,
		`TRUNCATE public.projection_parked`,
		`SELECT public.similarity('a', 'b')`,
	} {
		if _, err := conn.Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("%s as the role: %v, want permission denied", q, err)
		}
	}
	t.Logf("%d locks of %d tables refused", tried, len(tables))

	// The role's settings for later sessions are arr's again at arr's next
	// login, whatever the role set.
	for _, q := range []string{
		`ALTER ROLE CURRENT_USER IN DATABASE ` + dbName(t, h) + ` SET idle_in_transaction_session_timeout = 0`,
		`ALTER ROLE CURRENT_USER SET work_mem = '1GB'`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close(ctx)
	res := h.query(t, p.Name, "SELECT current_setting('idle_in_transaction_session_timeout') AS idle, current_setting('work_mem') AS mem")
	if len(res.Rows) != 1 || sqlproj.Text(res.Rows[0][0]) == "0" || sqlproj.Text(res.Rows[0][1]) == "1GB" {
		t.Fatalf("arr's session of the role after the role changed its settings: %v, want arr's", res.Rows)
	}
}
