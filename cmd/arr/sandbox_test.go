package main_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// sandbox is a running arr up with completions in the log, and two
// witnesses of analyst SQL that ran with arr's rights: the table
// public.pwned, which only arr's database user (a superuser here) may
// write, and a file that COPY … TO PROGRAM (superuser only) appends to.
type sandbox struct {
	*gw
	pool    *pgxpool.Pool
	dir     string
	witness string
	prompt  int
}

func newSandbox(t *testing.T, extraEnv ...string) *sandbox {
	t.Helper()
	g := newGateway(t, "enterprise", extraEnv...)
	pool := openPool(t, g.dbURL)
	t.Cleanup(func() { dropRoles(t, pool) })
	if _, err := pool.Exec(context.Background(), `CREATE TABLE public.pwned (who text, how text)`); err != nil {
		t.Fatal(err)
	}
	// The server runs programs as the operating-system user postgres:
	// the witness is a file in /tmp it may create, removed at the end.
	witness := fmt.Sprintf("/tmp/arr-sandbox-%d", time.Now().UnixNano())
	t.Cleanup(func() { os.Remove(witness) })
	s := &sandbox{gw: g, pool: pool, dir: t.TempDir(), witness: witness}
	s.complete(t, 3)
	return s
}

func (s *sandbox) complete(t *testing.T, n int) {
	t.Helper()
	for range n {
		s.prompt++
		if code, _, body := s.chat(t, map[string]any{"messages": userMsg(fmt.Sprintf("Count to %d", s.prompt))}); code != http.StatusOK {
			t.Fatalf("completion: %d %v", code, body)
		}
	}
}

// file writes a definition file; WITNESS in it becomes the witness file.
func (s *sandbox) file(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(s.dir, name)
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(src, "WITNESS", s.witness)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// escaped names what ran with arr's rights: rows of public.pwned and the
// witness file.
func (s *sandbox) escaped(t *testing.T) string {
	t.Helper()
	var what []string
	rows, err := s.pool.Query(context.Background(), `SELECT who || ' via ' || how FROM public.pwned`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			t.Fatal(err)
		}
		what = append(what, w)
	}
	if b, err := os.ReadFile(s.witness); err == nil {
		what = append(what, "the witness file: "+strings.TrimSpace(string(b)))
	}
	return strings.Join(what, "; ")
}

// pwn is a function an analyst's file defines: run with arr's rights it
// leaves both witnesses; run as the projection's role it can do neither
// (and says nothing: an attacker hides its failures).
const pwn = `CREATE FUNCTION pwn(how text) RETURNS text LANGUAGE plpgsql AS $p$
BEGIN
  BEGIN
    INSERT INTO public.pwned VALUES (current_user, how);
  EXCEPTION WHEN OTHERS THEN NULL;
  END;
  BEGIN
    EXECUTE format('COPY (SELECT %L) TO PROGRAM %L', current_user || ' via ' || how, 'cat >> WITNESS');
  EXCEPTION WHEN OTHERS THEN NULL;
  END;
  RETURN how;
END $p$;
`

// hostileFile is a definition file written to run code with arr's
// rights, from projections/sqlproj/testdata/hostile (the fuzzer's corpus
// too). Its header says what it tries and what arr must do: refuse it
// when it is created, with an error that says why; or create it and park
// each event it applies, with that error; or create it and run it as its
// role alone. A line "-- arr-test: pwn" becomes the function pwn.
type hostileFile struct {
	name, file, src string
	refused, parked string
}

func hostileFiles(t *testing.T) []hostileFile {
	t.Helper()
	paths, err := filepath.Glob("../../projections/sqlproj/testdata/hostile/*.sql")
	if err != nil || len(paths) < 6 {
		t.Fatalf("hostile files: %v (%d found)", err, len(paths))
	}
	var out []hostileFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		h := hostileFile{file: filepath.Base(p), src: strings.ReplaceAll(string(b), "-- arr-test: pwn\n", pwn)}
		for _, line := range strings.Split(h.src, "\n") {
			switch {
			case strings.HasPrefix(line, "-- hostile: "):
				h.name = strings.TrimPrefix(line, "-- hostile: ")
			case strings.HasPrefix(line, "-- expect: refused: "):
				h.refused = strings.TrimPrefix(line, "-- expect: refused: ")
			case strings.HasPrefix(line, "-- expect: parked: "):
				h.parked = strings.TrimPrefix(line, "-- expect: parked: ")
			}
		}
		if h.name == "" {
			t.Fatalf("%s: no -- hostile: line", p)
		}
		out = append(out, h)
	}
	return out
}

// TestAnalystSQLStaysInItsSandbox (issue 23, finding 1): on a running arr
// up, no definition file runs code with arr's rights — the exact
// file (an overload of arr_apply over a domain, which arr used to call by
// name with untyped arguments), overloads with other types, pg_catalog's
// names in the projection's schema, deferrable triggers (made in the DDL
// or while a batch runs), a cursor WITH HOLD, rules, views over arr's
// tables, an event trigger, arr's own names, a raised time limit. Each is
// refused when created, with what it must not do named, or runs as its
// role alone; either way the running arr up, which follows every
// projection, applies later events without running any of it as arr.
func TestAnalystSQLStaysInItsSandbox(t *testing.T) {
	s := newSandbox(t, "ARR_SQL_PROJECTION_TIMEOUT=2s")
	for _, tc := range hostileFiles(t) {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.Fields(tc.src[strings.Index(tc.src, "-- arr:projection"):])[2]
			out, errOut, code := s.arr("projections", "create", s.file(t, tc.file, tc.src), "--by", "mallory")
			switch {
			case tc.refused != "" && (code == 0 || !strings.Contains(errOut, tc.refused)):
				t.Errorf("create: exit %d, stdout %q, stderr %q; want it refused with %q", code, out, errOut, tc.refused)
			case tc.refused == "" && code != 0:
				t.Errorf("create: exit %d, stderr %q", code, errOut)
			}
			if tc.parked != "" {
				if out, _, _ := s.arr("projections", "parked", name); !strings.Contains(out, tc.parked) {
					t.Errorf("parked: %q, want events parked with %q", out, tc.parked)
				}
			}
			if w := s.escaped(t); w != "" {
				t.Fatalf("ran with arr's rights at create: %s", w)
			}
		})
	}
	// Later events reach every projection that was created, in the
	// running arr up: still nothing runs as arr.
	s.complete(t, 3)
	head := logHead(t, s.pool)
	eventually(t, 30*time.Second, "the SQL projections to pass the new completions", func() bool {
		return count(t, s.pool, fmt.Sprintf(`SELECT count(*) FROM projection_checkpoints WHERE name IN ('x3', 'x6', 'x7') AND position >= %d`, head)) == 3
	})
	if w := s.escaped(t); w != "" {
		t.Fatalf("ran with arr's rights in the running arr up: %s", w)
	}
}

// cpuTicks is the CPU time (user and system, in clock ticks) process pid
// has used.
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	var user, sys int64
	fmt.Sscan(f[11], &user)
	fmt.Sscan(f[12], &sys)
	return user + sys
}

// TestNotificationsAreWakeUpsOnly (issue 23, finding 2): an analyst can
// neither call pg_notify from a query nor put it in a section; and a
// NOTIFY on arr's channel with a bogus head (the statement NOTIFY cannot
// be revoked from anyone who can connect) does not make the running arr
// up spin: it reads the head from the database, and projections still
// follow the log.
func TestNotificationsAreWakeUpsOnly(t *testing.T) {
	s := newSandbox(t)
	s.mustArr(nil, "projections", "create", s.file(t, "spend.sql", spendByModel), "--by", "analyst")
	// Anyone's NOTIFY: arr up's CPU over three seconds stays that of an
	// idle process (a process that believed it spun a core).
	pid := s.proc.cmd.Process.Pid
	before := cpuTicks(t, pid)
	if _, err := s.pool.Exec(context.Background(), `NOTIFY arr_events, '18446744073709551615'`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	used := cpuTicks(t, pid) - before
	if used > 90 { // 0.9 s of CPU in 3 s
		t.Fatalf("arr up used %d ticks of CPU in the 3 s after a bogus notification: it believed the payload", used)
	}
	t.Logf("arr up used %d ticks of CPU in the 3 s after a bogus notification", used)
	bogus := "select pg_notify('arr_events', '18446744073709551615')"
	if _, errOut, code := s.arr("projections", "query", "spend_by_model", bogus); code == 0 || !strings.Contains(errOut, "permission denied for function pg_notify") {
		t.Fatalf("query %q: exit %d %q; want permission denied", bogus, code, errOut)
	}
	rearm := "-- arr:projection rearm\nCREATE TABLE t (v text);\n-- arr:on CompletionRecorded\nINSERT INTO t SELECT pg_notify('arr_events', '18446744073709551615')::text;\n"
	if _, errOut, code := s.arr("projections", "create", s.file(t, "rearm.sql", rearm)); code == 0 || !strings.Contains(errOut, "permission denied for function pg_notify") {
		t.Fatalf("create rearm.sql: exit %d %q; want permission denied", code, errOut)
	}

	s.complete(t, 2)
	waitSpend(t, s.gw, s.pool, "after a bogus notification")
}

// TestProjectionNamesKeepRebuildSchemas (issue 23, finding 4): a name
// with "__" (identity__shadow, identity__retired: the schemas of a
// rebuild of identity) is refused, so a rebuild never drops an analyst's
// read model.
func TestProjectionNamesKeepRebuildSchemas(t *testing.T) {
	s := newSandbox(t)
	for _, name := range []string{"identity__shadow", "identity__retired", "spend__x"} {
		src := "-- arr:projection " + name + "\nCREATE TABLE t (v text);\n-- arr:on CompletionRecorded\nINSERT INTO t VALUES (:type);\n"
		if _, errOut, code := s.arr("projections", "create", s.file(t, name+".sql", src)); code == 0 || !strings.Contains(errOut, `"__" is reserved`) {
			t.Fatalf("create %s: exit %d %q; want it refused", name, code, errOut)
		}
	}
	s.mustArr(nil, "projections", "rebuild", "identity")
	if n := count(t, s.pool, `SELECT count(*) FROM events WHERE event_type LIKE 'SQLProjection%'`); n != 0 {
		t.Fatalf("%d definitions recorded", n)
	}
}

// TestAnalystSQLCannotTakeArrsLocks (issue 23, finding 5): the advisory
// locks arr's projections and head signer use are not the analyst's to
// take, in a section, in the DDL or in a query.
func TestAnalystSQLCannotTakeArrsLocks(t *testing.T) {
	s := newSandbox(t)
	for name, src := range map[string]string{
		"section.sql": "-- arr:projection lock1\nCREATE TABLE t (v text);\n-- arr:on CompletionRecorded\nINSERT INTO t SELECT pg_advisory_xact_lock(1634890353, 1)::text || pg_sleep(5)::text;\n",
		"ddl.sql":     "-- arr:projection lock2\nCREATE TABLE t (v text);\nSELECT pg_advisory_lock(1634890353, 1);\n-- arr:on CompletionRecorded\nINSERT INTO t VALUES (:type);\n",
		"try.sql":     "-- arr:projection lock3\nCREATE TABLE t (v text);\n-- arr:batch CompletionRecorded\nINSERT INTO t SELECT pg_try_advisory_xact_lock_shared(position)::text FROM :events;\n",
	} {
		if _, errOut, code := s.arr("projections", "create", s.file(t, name, src)); code == 0 || !strings.Contains(errOut, "permission denied for function pg_") {
			t.Fatalf("create %s: exit %d %q; want permission denied", name, code, errOut)
		}
	}
	s.mustArr(nil, "projections", "create", s.file(t, "spend.sql", spendByModel), "--by", "analyst")
	if _, errOut, code := s.arr("projections", "query", "spend_by_model", "SELECT pg_advisory_lock(1)"); code == 0 || !strings.Contains(errOut, "permission denied for function pg_advisory_lock") {
		t.Fatalf("query: exit %d %q; want permission denied", code, errOut)
	}
}

// TestAnalystSQLHasCaps (issue 23, finding 9): a query that writes more
// temporary files than ARR_SQL_PROJECTION_TEMP_FILE_MB (set on the
// projection's role) is cancelled; a
// query's output is streamed, with a row cap PostgreSQL stops at, and a
// query of millions of rows without a cap keeps the CLI's memory small.
func TestAnalystSQLHasCaps(t *testing.T) {
	// The limit is set on the projection's role when arr sets it up
	// (here by arr up), for every session of it: big enough for the
	// uncapped query below, too small for the sort.
	s := newSandbox(t, "ARR_SQL_PROJECTION_TEMP_FILE_MB=128")
	s.mustArr(nil, "projections", "create", s.file(t, "spend.sql", spendByModel), "--by", "analyst")
	sort := "SELECT count(*) FROM (SELECT g, md5(g::text) AS h FROM generate_series(1, 4000000) g ORDER BY h) s"
	if _, errOut, code := s.arr("projections", "query", "spend_by_model", sort); code == 0 || !strings.Contains(errOut, "temporary file size exceeds temp_file_limit") {
		t.Fatalf("query past temp_file_limit: exit %d %q", code, errOut)
	}
	out, errOut, code := s.arr("projections", "query", "spend_by_model", "SELECT a * 1000 + b FROM generate_series(1, 3000) a, generate_series(1, 1000) b", "--format", "csv", "--max-rows", "1000")
	if lines := strings.Count(out, "\n"); code != 0 || lines != 1001 || !strings.Contains(errOut, "more than 1000 rows") {
		t.Fatalf("capped query: exit %d, %d lines, stderr %q", code, lines, errOut)
	}
	// No cap: a million rows stream through. (They pass through
	// PL/pgSQL's temporary store on the server, which the temp-file cap
	// bounds.)
	cmd := exec.Command(binary, "projections", "query", "spend_by_model", "SELECT a * 1000 + b, md5(b::text) FROM generate_series(1, 1000) a, generate_series(1, 1000) b", "--format", "csv", "--max-rows", "0")
	cmd.Env = append(s.environ(), "ARR_SQL_PROJECTION_TIMEOUT=5m")
	start := time.Now()
	exited := make(chan struct{})
	var lines lineCounter
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &lines, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The peak of the CLI's own memory (VmHWM of its process: a child's
	// rusage would count the test binary's memory at fork too).
	var peakKiB int64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err == nil {
				for _, line := range strings.Split(string(b), "\n") {
					if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
						var kib int64
						fmt.Sscan(f[1], &kib)
						peakKiB = max(peakKiB, kib)
					}
				}
			}
			select {
			case <-exited:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	close(exited)
	<-sampled
	if err != nil {
		t.Fatalf("uncapped query: %v: %s", err, stderr.String())
	}
	if lines.n != 1000001 || peakKiB == 0 || peakKiB > 200<<10 {
		t.Fatalf("uncapped query: %d lines, peak RSS %d MiB; want 1000001 lines in under 200 MiB", lines.n, peakKiB>>10)
	}
	t.Logf("a million rows as CSV: peak RSS %d MiB, %s", peakKiB>>10, time.Since(start).Round(time.Millisecond))
}

// lineCounter counts the lines written to it.
type lineCounter struct{ n int }

func (l *lineCounter) Write(p []byte) (int, error) {
	l.n += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

// TestSQLProjectionsAsARoleThatIsNotASuperuser: arr run as the role
// docs/sql-projections.md recommends — a login role with CREATEROLE that
// owns its database, set up once by a superuser with
// scripts/superuser-setup.sql — migrates, serves, builds and follows a SQL
// projection, and refuses the hostile file.
func TestSQLProjectionsAsARoleThatIsNotASuperuser(t *testing.T) {
	ctx := context.Background()
	admin := openPool(t, migratetest.AdminURL())
	suffix := strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	role, db := "arr_app_"+suffix, "arr_ns_"+suffix
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN CREATEROLE`,
		`CREATE DATABASE ` + db + ` OWNER ` + role + ` TEMPLATE template0`,
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = admin.Exec(ctx, `DROP DATABASE IF EXISTS `+db+` WITH (FORCE)`)
		rows, _ := admin.Query(ctx, `SELECT rolname FROM pg_roles WHERE rolname = $1 OR pg_has_role($1, oid, 'MEMBER') AND rolname LIKE 'arrsql\_%'`, role)
		roles, _ := pgx.CollectRows(rows, pgx.RowTo[string])
		for _, r := range roles {
			if r != role {
				_, _ = admin.Exec(ctx, `DROP ROLE IF EXISTS `+pgx.Identifier{r}.Sanitize())
			}
		}
		_, _ = admin.Exec(ctx, `REVOKE SET ON PARAMETER temp_file_limit FROM `+role)
		_, _ = admin.Exec(ctx, `DROP ROLE IF EXISTS `+role)
	})
	adminDB := migratetest.WithDatabase(migratetest.AdminURL(), db)
	if out, err := exec.Command("psql", "-X", "-q", "-d", adminDB, "-v", "arr_role="+role, "-f", "../../scripts/superuser-setup.sql").CombinedOutput(); err != nil {
		t.Fatalf("scripts/superuser-setup.sql: %v\n%s", err, out)
	}
	u, err := url.Parse(adminDB)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	e := &env{t: t, dbURL: u.String()}
	up := upstreamtest.Start(t)
	e.extraEnv = append(e.extraEnv, "ARR_UPSTREAM_BASE_URL="+up.URL, "ARR_UPSTREAM_API_KEY=sk-test-upstream", "ARR_SQL_PROJECTION_TIMEOUT=1s")
	s := &sandbox{gw: &gw{env: e, up: up, proc: e.up()}, pool: openPool(t, e.dbURL), dir: t.TempDir()}
	var super bool
	if err := s.pool.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super); err != nil || super {
		t.Fatalf("arr's user is a superuser (%v)", err)
	}
	e.createAccount("ns@example.com", "enterprise")
	s.key = e.mint("ns@example.com", "gateway").Secret
	s.complete(t, 2)
	s.mustArr(nil, "projections", "create", s.file(t, "spend.sql", spendByModel), "--by", "analyst")
	s.complete(t, 2)
	waitSpend(t, s.gw, s.pool, "as a role that is not a superuser")
	hostile := hostileFiles(t)[0]
	if _, errOut, code := s.arr("projections", "create", s.file(t, hostile.file, hostile.src)); code == 0 || !strings.Contains(errOut, hostile.refused) {
		t.Fatalf("create %s: exit %d %q; want it refused with %q", hostile.file, code, errOut, hostile.refused)
	}
	// A statement that outlasts its timeout (it traps the cancel) is
	// ended by arr's user, which is not a superuser: a member of the
	// role, it may pg_terminate_backend its sessions.
	hog := "-- arr:projection hog\nCREATE TABLE t (a text);\nDO $$ BEGIN LOOP BEGIN PERFORM pg_sleep(0.05); EXCEPTION WHEN query_canceled THEN NULL; END; END LOOP; END $$;\n-- arr:on KeyIssued\nDELETE FROM t;\n"
	if _, errOut, code := s.arr("projections", "create", s.file(t, "hog.sql", hog)); code == 0 || !strings.Contains(errOut, "terminating connection due to administrator command") {
		t.Fatalf("create hog.sql: exit %d %q; want its DDL ended by arr", code, errOut)
	}
	if n := count(t, s.pool, `SELECT count(*) FROM pg_stat_activity WHERE usename LIKE 'arrsql\_%\_\_check\_%'`); n != 0 {
		t.Fatalf("%d sessions of check roles are left", n)
	}
}
