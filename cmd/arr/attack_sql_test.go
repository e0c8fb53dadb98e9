package main_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Findings of a review of the SQL projections' sandbox (issue 36): each
// test is what an analyst's file does, end to end, against a running arr
// up, and what arr must still do.

// stallParked is a file whose section, for every event recorded after
// the file was set up, takes an ACCESS EXCLUSIVE lock on
// public.projection_parked, a table arr shares between every projection
// (the role has table-level SELECT, INSERT, UPDATE and DELETE on it, which
// is what LOCK TABLE asks for; row-level security does not apply to
// locks), and holds it for as long as a statement may run.
const stallParked = `-- arr:projection stall_parked
CREATE TABLE armed (at timestamptz);
INSERT INTO armed VALUES (now());
CREATE TABLE t (v text);
CREATE FUNCTION stall(at timestamptz) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
  IF at > (SELECT max(armed.at) FROM armed) + interval '1 second' THEN
    LOCK TABLE public.projection_parked IN ACCESS EXCLUSIVE MODE;
    PERFORM pg_sleep(25);
  END IF;
  RETURN 'ok';
END $f$;
-- arr:on CompletionRecorded
INSERT INTO t VALUES (stall(:recorded_at));
`

// TestAnalystSQLCannotLockArrsSharedTables: a projection's role can lock
// nothing it shares with the rest of arr. Today its batch locks
// public.projection_parked (every projection's parked events) for the
// statement timeout plus grace, again at every retry, and /healthz of
// every service, which counts parked events, hangs meanwhile (so do the
// built-ins' parking, arr projections status and /metrics).
func TestAnalystSQLCannotLockArrsSharedTables(t *testing.T) {
	s := newSandbox(t)
	s.mustArr(nil, "projections", "create", s.file(t, "stall.sql", stallParked), "--by", "mallory")
	time.Sleep(1500 * time.Millisecond)
	s.complete(t, 1)
	role := rolePrefix(t, s.pool)
	locked := false
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && !locked {
		locked = count(t, s.pool, `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.relation = 'public.projection_parked'::regclass AND l.mode = 'AccessExclusiveLock' AND l.granted
			AND a.usename LIKE '`+strings.ReplaceAll(role, `'`, `''`)+`stall_parked'`) > 0
		if !locked {
			time.Sleep(200 * time.Millisecond)
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	start := time.Now()
	resp, err := client.Get(s.gateway + "/healthz")
	if err != nil {
		t.Fatalf("/healthz did not answer within 5 s while the analyst's role held a lock (held: %v) on public.projection_parked: %v (after %s)", locked, err, time.Since(start).Round(time.Millisecond))
	}
	var hb strings.Builder
	_, _ = io.Copy(&hb, resp.Body)
	resp.Body.Close()
	t.Logf("/healthz %d after %s: %.300s", resp.StatusCode, time.Since(start).Round(time.Millisecond), hb.String())
	if strings.Contains(hb.String(), "projections could not be checked") {
		t.Errorf("/healthz of the gateway is degraded by the analyst's lock: %.200s", hb.String())
	}
	if locked {
		t.Fatalf("the analyst's role holds an ACCESS EXCLUSIVE lock on public.projection_parked, shared by every projection")
	}
}

// fillParked is a file whose batch writes 8 MiB of incompressible text
// into public.projection_parked, under its own projection's name (which
// row-level security allows), outside its schema, which is all that
// ARR_SQL_PROJECTION_MAX_MB measures.
const fillParked = `-- arr:projection fill_parked
CREATE TABLE t (v bigint);
CREATE FUNCTION fill() RETURNS bigint LANGUAGE plpgsql AS $f$
BEGIN
  INSERT INTO public.projection_parked (projection, position, event_id, event_type, error)
  SELECT 'fill_parked', 1000000000 + g, gen_random_uuid(), 'CompletionRecorded',
    (SELECT string_agg(md5(random()::text || g::text || h::text), '') FROM generate_series(1, 16384) h)
  FROM generate_series(1, 16) g
  ON CONFLICT DO NOTHING;
  RETURN 1;
END $f$;
-- arr:batch CompletionRecorded
INSERT INTO t SELECT fill() FROM (SELECT 1 FROM :events LIMIT 1) e;
`

// TestAnalystSQLDiskLimitCoversWhatItWrites: ARR_SQL_PROJECTION_MAX_MB
// bounds what a projection writes, not only its schema. Today a batch
// writes past the limit into public.projection_parked (and the size
// check, of its schema alone, passes): 2 MiB allowed, 8 MiB written per
// build, more at every event.
func TestAnalystSQLDiskLimitCoversWhatItWrites(t *testing.T) {
	s := newSandbox(t, "ARR_SQL_PROJECTION_MAX_MB=2")
	_, errOut, code := s.arr("projections", "create", s.file(t, "fill.sql", fillParked), "--by", "mallory")
	bytes := count(t, s.pool, `SELECT coalesce(sum(pg_column_size(p.*)), 0) FROM public.projection_parked p WHERE projection = 'fill_parked'`)
	t.Logf("create: exit %d %q; %d bytes parked", code, errOut, bytes)
	if code == 0 || bytes > 2<<20 {
		t.Fatalf("create exited %d (%q); projection fill_parked wrote %d bytes of public.projection_parked, past its 2 MiB limit", code, errOut, bytes)
	}
}

// escapes is a file that writes terminal control sequences (OSC 52,
// which sets the operator's clipboard on many terminals, a screen clear
// and a carriage return that overwrites the line) where arr's operator
// reads them: a parked event's type and error, which the role may write
// (its own rows of public.projection_parked), and a value of its table.
// arr cleans the errors it parks itself (text.Clean), not what it reads
// back.
const escapes = `-- arr:projection escapes
CREATE TABLE t (v text);
INSERT INTO t VALUES (E'fine\x1b]52;c;Y3VybCAxMjcuMC4wLjEgfCBzaA==\x07\x1b[2J\rall good');
CREATE FUNCTION park_escape(pos bigint) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
  INSERT INTO public.projection_parked (projection, position, event_id, event_type, error)
  VALUES ('escapes', 1000000000 + pos, gen_random_uuid(), E'Completion\x1b[2JRecorded', E'no error\x1b]52;c;Y3VybCAxMjcuMC4wLjEgfCBzaA==\x07\r')
  ON CONFLICT DO NOTHING;
  RETURN 'x';
END $f$;
-- arr:on CompletionRecorded
INSERT INTO t VALUES (park_escape(:position));
`

// TestAnalystSQLCannotWriteToTheOperatorsTerminal: what an analyst's role
// wrote reaches an operator's terminal from arr's CLI without control
// characters (arr projections parked, arr projections query as a table).
func TestAnalystSQLCannotWriteToTheOperatorsTerminal(t *testing.T) {
	s := newSandbox(t)
	s.mustArr(nil, "projections", "create", s.file(t, "escapes.sql", escapes), "--by", "mallory")
	// A file refused for its DDL's error: the message is the analyst's.
	raise := "-- arr:projection escapes_raise\nCREATE TABLE t (v text);\nDO $d$ BEGIN RAISE EXCEPTION E'bad\\x1b]52;c;Y3VybCAxMjcuMC4wLjEgfCBzaA==\\x07\\x1b[2K\\rall good'; END $d$;\n-- arr:on CompletionRecorded\nINSERT INTO t VALUES (:type);\n"
	if _, errOut, code := s.arr("projections", "create", s.file(t, "raise.sql", raise)); code == 0 {
		t.Fatalf("create raise.sql: exit 0")
	} else if strings.ContainsAny(errOut, "\x1b\x07\r") {
		t.Errorf("arr projections create wrote the analyst's control characters to the terminal: %q", errOut)
	}
	for _, args := range [][]string{
		{"projections", "parked"},
		{"projections", "parked", "escapes", "--json"},
		{"projections", "query", "escapes", "SELECT v FROM t"},
	} {
		out, errOut, code := s.arr(args...)
		if code != 0 {
			t.Fatalf("arr %s: exit %d %q", strings.Join(args, " "), code, errOut)
		}
		t.Logf("arr %s: %q", strings.Join(args, " "), out)
		for _, r := range out + errOut {
			if r == 0x1b || r == '\r' || r == 0x07 {
				t.Errorf("arr %s wrote the control character U+%04X of the analyst's to the terminal: %q", strings.Join(args, " "), r, out)
				break
			}
		}
	}
}

// uninterruptible is a file whose section, for every event recorded after
// the file was set up, calls pg_trgm's similarity (installed by arr's
// migration 00050, executable by every role) on a 70 MB text: the
// trigrams are generated and sorted in C that never checks for
// interrupts, so neither a statement timeout nor pg_terminate_backend
// ends the backend until the call returns.
const uninterruptible = `-- arr:projection trgm_stall
CREATE TABLE armed (at timestamptz);
INSERT INTO armed VALUES (now());
CREATE TABLE t (v float8);
-- arr:on CompletionRecorded
INSERT INTO t SELECT public.similarity(s, s)
FROM (SELECT repeat(string_agg(md5(g::text), ''), 180) AS s FROM generate_series(1, 12000) g) x
WHERE :recorded_at > (SELECT max(at) FROM armed) + interval '1 second';
`

// TestAnalystSQLEndsWithinItsBound: the security model bounds every
// statement of an analyst's session by the timeout plus its grace (arr
// ends the backend with pg_terminate_backend). A statement spent in one
// call of C code that checks no interrupts outlives both: here the
// backend of the projection's role runs on well past
// ARR_SQL_PROJECTION_TIMEOUT (2 s) + grace (2 s) + pg_terminate_backend's
// own 5 s wait, holding its CPU, memory and the role's one session.
func TestAnalystSQLEndsWithinItsBound(t *testing.T) {
	s := newSandbox(t, "ARR_SQL_PROJECTION_TIMEOUT=2s")
	// A role may run only pg_catalog's functions and its own: the file is
	// refused at its check, before any statement of it runs for long.
	if _, errOut, code := s.arr("projections", "create", s.file(t, "trgm.sql", uninterruptible), "--by", "mallory"); code != 0 {
		if !strings.Contains(errOut, "permission denied for function similarity") {
			t.Fatalf("create trgm.sql: exit %d for another reason than pg_trgm's function: %q", code, errOut)
		}
		t.Logf("create trgm.sql refused: %q", errOut)
		return
	}
	time.Sleep(1500 * time.Millisecond)
	s.complete(t, 1)
	like := rolePrefix(t, s.pool) + "trgm\\_stall"
	var pid int32
	var started time.Time
	eventually(t, 20*time.Second, "a backend of trgm_stall's role in a statement", func() bool {
		err := s.pool.QueryRow(context.Background(), `SELECT pid, query_start FROM pg_stat_activity
			WHERE usename LIKE $1 AND state = 'active' AND query LIKE '%arr_apply%' ORDER BY query_start LIMIT 1`, like).Scan(&pid, &started)
		return err == nil
	})
	// The timeout, the grace, and the 5 s pg_terminate_backend waits,
	// with 3 s to spare.
	const bound = 2*time.Second + 2*time.Second + 5*time.Second + 3*time.Second
	for {
		var alive bool
		var now time.Time
		if err := s.pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1), clock_timestamp()`, pid).Scan(&alive, &now); err != nil {
			t.Fatal(err)
		}
		if !alive {
			t.Logf("the backend ended %s after its statement began", now.Sub(started).Round(100*time.Millisecond))
			return
		}
		if now.Sub(started) > bound {
			// Let it finish before the cleanup drops its role, and say how
			// long it ran.
			deadline := time.Now().Add(60 * time.Second)
			for time.Now().Before(deadline) && count(t, s.pool, fmt.Sprintf(`SELECT count(*) FROM pg_stat_activity WHERE pid = %d`, pid)) > 0 {
				time.Sleep(250 * time.Millisecond)
			}
			t.Fatalf("the backend %d of trgm_stall's role ran on past its bound of %s: it ended %s after its statement began",
				pid, bound, time.Since(started).Round(100*time.Millisecond))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// loudError is a file whose section, for every event recorded after the
// file was set up, fails with a 20 MB error message (PL/pgSQL's RAISE
// takes any text). arr records a fault's error cut to 2,000 characters,
// but logs every failed try whole.
const loudError = `-- arr:projection loud_error
CREATE TABLE armed (at timestamptz);
INSERT INTO armed VALUES (now());
CREATE TABLE t (v text);
CREATE FUNCTION shout(at timestamptz) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
  IF at > (SELECT max(armed.at) FROM armed) + interval '1 second' THEN
    RAISE EXCEPTION '%', repeat('A', 20000000) USING ERRCODE = '57014';
  END IF;
  RETURN 'ok';
END $f$;
-- arr:on CompletionRecorded
INSERT INTO t VALUES (shout(:recorded_at));
`

// TestAnalystSQLCannotFillArrsLogs: what an analyst's failing statement
// makes arr log is bounded. Today every retry of the batch logs the
// analyst's whole error message (here 20 MB, with an error code arr takes
// for a timeout, so it is never parked and retried forever): arr up's log
// grows by hundreds of megabytes within seconds.
func TestAnalystSQLCannotFillArrsLogs(t *testing.T) {
	s := newSandbox(t)
	s.mustArr(nil, "projections", "create", s.file(t, "loud.sql", loudError), "--by", "mallory")
	time.Sleep(1500 * time.Millisecond)
	before := len(s.proc.logs.String())
	s.complete(t, 1)
	time.Sleep(10 * time.Second)
	grew := len(s.proc.logs.String()) - before
	if grew > 1<<20 {
		t.Fatalf("arr up logged %d bytes in the 10 s after one event that loud_error fails on", grew)
	}
}

// catalogFill is a file whose DDL stores 8 MiB of incompressible text in
// the database's catalogs, not in its tables: a comment on its table
// (pg_description) and the body of a function (pg_proc). Both are the
// role's own objects, and neither is in pg_total_relation_size of its
// schema, which is all ARR_SQL_PROJECTION_MAX_MB measures.
const catalogFill = `-- arr:projection catalog_fill
CREATE TABLE t (v text);
DO $d$ BEGIN
  EXECUTE format('COMMENT ON TABLE t IS %L', (SELECT string_agg(md5(random()::text || g::text), '') FROM generate_series(1, 131072) g));
  EXECUTE format('CREATE FUNCTION f() RETURNS text LANGUAGE sql AS %L', 'SELECT ' || quote_literal((SELECT string_agg(md5(random()::text || g::text), '') FROM generate_series(1, 131072) g)));
END $d$;
-- arr:on CompletionRecorded
INSERT INTO t VALUES (:type);
`

// TestAnalystSQLDiskLimitCoversTheCatalog: ARR_SQL_PROJECTION_MAX_MB (2
// here) bounds what a projection stores, catalogs included. Today the
// file is created, its 8 MiB in pg_description and pg_proc unmeasured.
func TestAnalystSQLDiskLimitCoversTheCatalog(t *testing.T) {
	s := newSandbox(t, "ARR_SQL_PROJECTION_MAX_MB=2")
	_, errOut, code := s.arr("projections", "create", s.file(t, "catalog.sql", catalogFill), "--by", "mallory")
	stored := count(t, s.pool, `SELECT coalesce((SELECT sum(pg_column_size(d.description)) FROM pg_description d JOIN pg_class c ON c.oid = d.objoid
			WHERE d.classoid = 'pg_class'::regclass AND c.relnamespace = to_regnamespace('rm_catalog_fill')), 0)
		+ coalesce((SELECT sum(pg_column_size(p.prosrc)) FROM pg_proc p WHERE p.pronamespace = to_regnamespace('rm_catalog_fill')), 0)`)
	t.Logf("create: exit %d %q; %d bytes in the catalogs", code, errOut, stored)
	if code == 0 && stored > 2<<20 {
		t.Fatalf("catalog_fill was created with %d bytes of its own in pg_description and pg_proc, past its 2 MiB limit", stored)
	}
}

// orphan is a file whose section, for every event recorded after the
// file was set up, sleeps and traps the statement timeout's cancel: only
// arr's watchdog (pg_terminate_backend) ends it, and the watchdog dies
// with its process.
const orphan = `-- arr:projection orphan
CREATE TABLE armed (at timestamptz);
INSERT INTO armed VALUES (now());
CREATE TABLE t (v text);
CREATE FUNCTION hang(at timestamptz) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
  IF at > (SELECT max(armed.at) FROM armed) + interval '1 second' THEN
    BEGIN
      PERFORM pg_sleep(90);
    EXCEPTION WHEN query_canceled THEN
      PERFORM pg_sleep(90);
    END;
  END IF;
  RETURN 'ok';
END $f$;
-- arr:on CompletionRecorded
INSERT INTO t VALUES (hang(:recorded_at));
`

// TestAnalystSessionOfADeadProcessIsEnded: the security model says a
// process that waits for a role's one session ends a session of the role
// that has been in one statement longer than any statement may run (its
// process died: nobody watches it). Here arr up dies (SIGKILL) while its
// batch of orphan runs; then arr projections query needs orphan's
// session. Today it waits until it is killed 30 s later, and the orphaned
// backend runs on: endStale's query calls pg_catalog.greatest, which does
// not exist (GREATEST is SQL syntax, not a function), so it never ends a
// session.
func TestAnalystSessionOfADeadProcessIsEnded(t *testing.T) {
	s := newSandbox(t, "ARR_SQL_PROJECTION_TIMEOUT=2s")
	like := rolePrefix(t, s.pool) + "orphan"
	t.Cleanup(func() {
		_, _ = s.pool.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename LIKE $1`, like)
	})
	s.mustArr(nil, "projections", "create", s.file(t, "orphan.sql", orphan), "--by", "mallory")
	time.Sleep(1500 * time.Millisecond)
	s.complete(t, 1)
	var pid int32
	eventually(t, 20*time.Second, "arr up's batch of orphan in its statement", func() bool {
		return s.pool.QueryRow(context.Background(), `SELECT pid FROM pg_stat_activity WHERE usename LIKE $1 AND state = 'active' AND query LIKE '%arr_apply%'`, like).Scan(&pid) == nil
	})
	s.proc.kill() // before its watchdog ends the statement (2 s + 2 s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "projections", "query", "orphan", "SELECT count(*) FROM t")
	cmd.Env = s.environ()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	alive := count(t, s.pool, fmt.Sprintf(`SELECT count(*) FROM pg_stat_activity WHERE pid = %d`, pid))
	if err != nil {
		t.Fatalf("arr projections query orphan after arr up died mid-batch: %v after %s (the orphaned backend alive: %d): %s",
			err, time.Since(start).Round(100*time.Millisecond), alive, out[:min(len(out), 400)])
	}
	if alive != 0 {
		t.Fatalf("the orphaned backend %d still runs", pid)
	}
}
