package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// escapeByDeferredConstraint is issue 36's escape: a deferred EXCLUDE
// constraint whose expression calls the analyst's function. When the
// constraint is re-checked outside any SECURITY DEFINER function (arr's
// SET CONSTRAINTS ALL IMMEDIATE, or the commit), set_config('role',
// session_user, true) makes the function the session's user: in a
// session of arr's, arr's user. The function then writes public.pwned
// (which only arr's user may write) and counts public.events; and it
// notes in its own table who it ran as, so the test sees that it ran.
//
// At insert time f returns a constant, so every row after the first is a
// potential violation and queued for the re-check; at the re-check, once
// set_config succeeded, it returns the row's own value, which conflicts
// with nothing, so the transaction commits what it did.
const escapeByDeferredConstraint = `-- arr:projection escape_exclude
CREATE TABLE seen (who text, session text, at text);
CREATE FUNCTION g(x text) RETURNS text LANGUAGE plpgsql AS $g$
BEGIN
  BEGIN
    PERFORM set_config('role', session_user::text, true);
  EXCEPTION WHEN OTHERS THEN
    RETURN 'same';
  END;
  INSERT INTO seen VALUES (current_user, session_user, x);
  BEGIN
    INSERT INTO public.pwned SELECT current_user, 'a deferred EXCLUDE at ' || x || ', events: ' || (SELECT count(*) FROM public.events);
  EXCEPTION WHEN OTHERS THEN NULL;
  END;
  BEGIN
    EXECUTE format('COPY (SELECT %L) TO PROGRAM %L', current_user || ' via a deferred EXCLUDE at ' || x, 'cat >> WITNESS');
  EXCEPTION WHEN OTHERS THEN NULL;
  END;
  RETURN x;
END $g$;
CREATE FUNCTION f(x text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $f$ BEGIN RETURN g(x); END $f$;
CREATE TABLE u (x text, EXCLUDE USING btree ((f(x)) WITH =) DEFERRABLE INITIALLY DEFERRED);
-- arr:on CompletionRecorded
INSERT INTO u VALUES ('position ' || :position);
`

// TestAnalystSQLCannotBecomeArrsUser (issue 36, finding 1): the deferred
// constraint of escapeByDeferredConstraint runs as the projection's role
// alone, at arr projections create (its check and its build) and at
// every later event the running arr up applies: nothing of it runs as
// arr's user, and what it ran, ran in a session whose session user is
// the role.
func TestAnalystSQLCannotBecomeArrsUser(t *testing.T) {
	s := newSandbox(t)
	ctx := context.Background()
	if out, errOut, code := s.arr("projections", "create", s.file(t, "escape.sql", escapeByDeferredConstraint), "--by", "mallory"); code != 0 {
		t.Fatalf("create: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if w := s.escaped(t); w != "" {
		t.Errorf("ran with arr's rights at arr projections create: %s", w)
	}
	// The function ran: as the role, in a session of the role's.
	role := strings.ReplaceAll(rolePrefix(t, s.pool), `\`, "") + "escape_exclude"
	seen := func() []string {
		t.Helper()
		rows, err := s.pool.Query(ctx, `SELECT who || '/' || session FROM rm_escape_exclude.seen`)
		if err != nil {
			t.Fatal(err)
		}
		who, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return who
	}
	check := func(when string, who []string) {
		t.Helper()
		if len(who) == 0 {
			t.Errorf("%s: the constraint's function never ran past its set_config (the test proves nothing)", when)
		}
		for _, w := range who {
			if w != role+"/"+role {
				t.Errorf("%s: the constraint's function ran as %s (current user/session user), want %s/%s", when, w, role, role)
			}
		}
	}
	check("at create", seen())
	if _, err := s.pool.Exec(ctx, `DELETE FROM public.pwned`); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(s.witness); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	before := len(seen())
	// Later events, in the running arr up.
	s.complete(t, 3)
	head := logHead(t, s.pool)
	eventually(t, 30*time.Second, "escape_exclude to pass the new completions", func() bool {
		return count(t, s.pool, fmt.Sprintf(`SELECT count(*) FROM projection_checkpoints WHERE name = 'escape_exclude' AND position >= %d`, head)) == 1
	})
	if w := s.escaped(t); w != "" {
		t.Errorf("ran with arr's rights in the running arr up: %s", w)
	}
	later := seen()
	if len(later) <= before {
		t.Errorf("the running arr up applied the new events without the constraint's function running (%d rows before, %d after)", before, len(later))
	}
	check("in the running arr up", later)
	if t.Failed() {
		out, _, _ := s.arr("projections", "status")
		t.Logf("status:\n%s", strings.TrimSpace(out))
	}
}

// growing is a projection whose tables grow by about 3 MiB per
// completion: past ARR_SQL_PROJECTION_MAX_MB=2 at the first one.
const growing = `-- arr:projection growing
CREATE TABLE t (a text);
-- arr:on CompletionRecorded
INSERT INTO t SELECT md5(g::text || :position) FROM generate_series(1, 40000) g;
`

// TestAnalystSQLDiskLimit (issue 36, finding 1, disk): a projection whose
// tables would grow past ARR_SQL_PROJECTION_MAX_MB has the batch that
// took them there rolled back and stops, with the reason in /healthz and
// arr_projection_stopped on /metrics; the other projections (a SQL one
// among them) go on.
func TestAnalystSQLDiskLimit(t *testing.T) {
	s := newSandbox(t, "ARR_SQL_PROJECTION_MAX_MB=2")
	s.mustArr(nil, "projections", "create", s.file(t, "spend.sql", spendByModel), "--by", "analyst")
	// Built from the log at create: past the limit already.
	if _, errOut, code := s.arr("projections", "create", s.file(t, "growing.sql", growing), "--by", "mallory"); code == 0 || !strings.Contains(errOut, "past its limit of 2.0 MiB") {
		t.Fatalf("create growing.sql: exit %d %q; want its build stopped at the limit", code, errOut)
	}
	// The running arr up follows it, and stops it too.
	var health struct {
		Projections map[string]struct {
			Stopped bool   `json:"stopped"`
			Error   string `json:"error"`
		} `json:"projections"`
	}
	var body []byte
	eventually(t, 30*time.Second, "/healthz to say growing stopped", func() bool {
		_, body = get(t, s.gateway+"/healthz", nil)
		if err := json.Unmarshal(body, &health); err != nil {
			t.Fatalf("healthz %s: %v", body, err)
		}
		g := health.Projections["growing"]
		return g.Stopped && strings.Contains(g.Error, "past its limit of 2.0 MiB")
	})
	if n := count(t, s.pool, `SELECT count(*) FROM rm_growing.t`); n != 0 {
		t.Fatalf("growing holds %d rows: the batch past the limit was not rolled back", n)
	}
	if _, mb := get(t, s.gateway+"/metrics", nil); !strings.Contains(string(mb), `arr_projection_stopped{projection="growing"} 1`) {
		t.Fatalf("/metrics has no arr_projection_stopped of growing:\n%s", grepLines(string(mb), "arr_projection_stopped"))
	}
	s.complete(t, 2)
	waitSpend(t, s.gw, s.pool, "with growing stopped")
}

// grepLines are the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
