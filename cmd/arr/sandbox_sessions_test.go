package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/migrations/migratetest"
)

// probeFile is a hostile file that defines probe(route) (the files 12 and
// on of projections/sqlproj/testdata/hostile): wherever the analyst's code
// runs, probe records the route, the schema, session_user and
// current_user in the projection's table log, tries to become arr's
// database user (set_config of role, SET ROLE, RESET ROLE), then to write
// public.arr_canary, move public.arr_canary_seq, read public.events and
// rm_identity.api_keys, grant itself pg_execute_server_program and run a
// program that appends to the witness file, and records how each attempt
// went. Its header may say, beside
// hostileFile's lines:
//
//	-- runs: ROUTE   a route (a prefix of probe's label) that must have run, if the file is created
//	-- query: SQL    a query to run with arr projections query (a reader arr might be)
type probeFile struct {
	hostileFile
	projection string
	runs       []string
	queries    []string
}

func probeFiles(t *testing.T) []probeFile {
	t.Helper()
	var out []probeFile
	for _, h := range hostileFiles(t) {
		if !strings.Contains(h.src, "CREATE FUNCTION probe(route text)") {
			continue
		}
		f := probeFile{hostileFile: h, projection: strings.Fields(h.src[strings.Index(h.src, "-- arr:projection"):])[2]}
		for _, line := range strings.Split(h.src, "\n") {
			if r, ok := strings.CutPrefix(line, "-- runs: "); ok {
				f.runs = append(f.runs, r)
			}
			if q, ok := strings.CutPrefix(line, "-- query: "); ok {
				f.queries = append(f.queries, q)
			}
		}
		out = append(out, f)
	}
	if len(out) < 8 {
		t.Fatalf("%d hostile files define probe, want at least 8", len(out))
	}
	return out
}

// readAfterUp names the first reading of the probes' records.
const readAfterUp = "after the build and the running arr up"

// probeRecord is a row of a probe file's table log.
type probeRecord struct {
	At          time.Time `json:"at"`
	Route       string    `json:"route"`
	Schema      string    `json:"schema_name"`
	SessionUser string    `json:"session_user_name"`
	CurrentUser string    `json:"current_user_name"`
	UserAfter   string    `json:"user_after"`
	SetConfig   string    `json:"set_config_role"`
	SetRole     string    `json:"set_role"`
	ResetRole   string    `json:"reset_role"`
	Canary      string    `json:"canary"`
	CanarySeq   string    `json:"canary_seq"`
	Events      string    `json:"events"`
	APIKeys     string    `json:"api_keys"`
	Grant       string    `json:"grant_program"`
	Program     string    `json:"copy_program"`

	role, when string // the projection's role when the record was read, and when that was
}

// reached lists what of arr's analyst SQL has reached so far: rows of
// public.arr_canary and public.pwned, the canary sequence moved (it moves
// in a transaction that is rolled back too, such as a check's), and the
// lines of the witness file (which COPY … TO PROGRAM appends to).
func (s *sandbox) reached(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	var what []string
	rows, err := s.pool.Query(ctx, `SELECT 'public.arr_canary: ' || concat_ws(', ', route, 'session_user ' || session_user_name, 'current_user ' || current_user_name) FROM public.arr_canary
		UNION ALL SELECT 'public.arr_canary_seq moved to ' || last_value FROM public.arr_canary_seq WHERE is_called`)
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
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(s.witness); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			what = append(what, "a program ran on the server: "+line)
		}
	}
	rows, err = s.pool.Query(ctx, `SELECT 'public.pwned: ' || who || ' via ' || how FROM public.pwned`)
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
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return what
}

// TestAnalystSQLRunsOnlyAsItsRole (issue 36, finding 1): analyst code
// that arr's side reaches by routes other than a statement of the file —
// deferred constraint triggers (in the DDL, hiding themselves, made while
// a batch runs), exclusion constraints deferred (the file, by the
// analyst's SET CONSTRAINTS, made while a batch runs), index expressions
// and predicates, domain and table checks, defaults and generated
// columns, casts, operators and a range's subtype_diff, an event trigger,
// rules, triggers and policies on what arr touches, ANALYZE of
// expressions, views and pg_catalog's names, temporary tables ON COMMIT,
// cursors WITH HOLD, the role's own settings — runs, whenever it runs, as
// the projection's role alone: when arr checks the file at create (even
// one it then refuses), when it builds it, when the running arr up
// applies later events, at rebuild, query and drop. Whatever the route,
// nothing of arr's is reached (the canary table and sequence, public.events,
// rm_identity.api_keys, programs on the server), and every session_user and
// current_user that probe recorded is the projection's role.
func TestAnalystSQLRunsOnlyAsItsRole(t *testing.T) {
	runProbes(t, newSandbox(t, "ARR_SQL_PROJECTION_TIMEOUT=5s"))
}

// TestAnalystSQLRunsOnlyAsItsRoleNotASuperuser: the same, with arr run as
// the role docs/sql-projections.md recommends, a login role with
// CREATEROLE that owns its database (set up by scripts/superuser-setup.sql).
// There analyst code that became arr's user could read the keys' hashes
// and, with CREATEROLE, grant itself what it lacks.
func TestAnalystSQLRunsOnlyAsItsRoleNotASuperuser(t *testing.T) {
	runProbes(t, newNonSuperuserSandbox(t, "ARR_SQL_PROJECTION_TIMEOUT=5s"))
}

// newNonSuperuserSandbox is a sandbox whose arr runs as a login role with
// CREATEROLE that owns its database, as in
// TestSQLProjectionsAsARoleThatIsNotASuperuser.
func newNonSuperuserSandbox(t *testing.T, extraEnv ...string) *sandbox {
	t.Helper()
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
		// The projections' roles (those arr's user is a member of, and
		// those named for the database), then the database, then them.
		rows, _ := admin.Query(ctx, `SELECT rolname FROM pg_roles WHERE rolname <> $1 AND (pg_has_role($1, oid, 'MEMBER') AND rolname LIKE 'arrsql\_%'
			OR rolname LIKE 'arrsql\_' || (SELECT oid FROM pg_database WHERE datname = $2) || '\_%')`, role, db)
		roles, _ := pgx.CollectRows(rows, pgx.RowTo[string])
		_, _ = admin.Exec(ctx, `DROP DATABASE IF EXISTS `+db+` WITH (FORCE)`)
		for _, r := range roles {
			_, _ = admin.Exec(ctx, `DROP ROLE IF EXISTS `+pgx.Identifier{r}.Sanitize())
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
	e := &env{t: t, dbURL: u.String(), dataDir: t.TempDir()}
	up := upstreamtest.Start(t)
	e.extraEnv = append(e.extraEnv, "ARR_UPSTREAM_BASE_URL="+up.URL, "ARR_UPSTREAM_API_KEY=sk-test-upstream")
	e.extraEnv = append(e.extraEnv, extraEnv...)
	witness := fmt.Sprintf("/tmp/arr-sandbox-%d", time.Now().UnixNano())
	t.Cleanup(func() { os.Remove(witness) })
	s := &sandbox{gw: &gw{env: e, up: up, proc: e.up()}, pool: openPool(t, e.dbURL), dir: t.TempDir(), witness: witness}
	var super bool
	if err := s.pool.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super); err != nil || super {
		t.Fatalf("arr's user is a superuser (%v)", err)
	}
	if _, err := s.pool.Exec(ctx, `CREATE TABLE public.pwned (who text, how text)`); err != nil {
		t.Fatal(err)
	}
	e.createAccount("ns@example.com", "enterprise")
	s.key = e.mint("ns@example.com", "gateway").Secret
	s.complete(t, 3)
	return s
}

// runProbes runs every probe file through create, the running arr up,
// rebuild, query and drop on s, and checks where their code ran.
func runProbes(t *testing.T, s *sandbox) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.pool.Exec(ctx, `CREATE TABLE public.arr_canary (route text, session_user_name text, current_user_name text);
		CREATE SEQUENCE public.arr_canary_seq;
		REVOKE ALL ON public.arr_canary, public.arr_canary_seq FROM PUBLIC`); err != nil {
		t.Fatal(err)
	}
	// A projection the test did not get to drop runs its probe on: arr up
	// stops before the witness file is removed (cleanups run last first).
	t.Cleanup(func() {
		s.proc.stop(t)
		os.Remove(s.witness)
	})
	var arrUser string
	if err := s.pool.QueryRow(ctx, `SELECT current_user`).Scan(&arrUser); err != nil {
		t.Fatal(err)
	}
	files := probeFiles(t)
	// Schemas left by a test that stopped early hold what the roles own
	// (and casts, which DROP OWNED does not take): dropped before the roles.
	t.Cleanup(func() {
		for _, f := range files {
			for _, schema := range []string{"rm_" + f.projection, "rm_" + f.projection + "__shadow"} {
				if _, err := s.pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
					t.Logf("dropping schema %s: %v", schema, err)
				}
			}
		}
	})

	// What each step reached that earlier steps had not (the same line of
	// the witness file, say, as often again as it is new).
	seen := map[string]int{}
	escapes := map[string][]string{} // by file, or "" for the running arr up
	step := func(file, what string) {
		t.Helper()
		now := map[string]int{}
		for _, w := range s.reached(t) {
			if now[w]++; now[w] > seen[w] {
				seen[w] = now[w]
				escapes[file] = append(escapes[file], what+": "+w)
			}
		}
	}

	created := map[string]bool{}
	outcome := map[string]string{}
	for _, f := range files {
		out, errOut, code := s.arr("projections", "create", s.file(t, f.file, f.src), "--by", "mallory")
		if code == 0 {
			created[f.file] = true
			outcome[f.file] = "created"
		} else {
			outcome[f.file] = "refused: " + strings.TrimSpace(errOut)
			if out != "" {
				outcome[f.file] += " (stdout " + strings.TrimSpace(out) + ")"
			}
		}
		step(f.file, "arr projections create")
	}

	// Later events, applied by the running arr up: each created projection
	// passes them (or parks them), and nothing of arr's is reached.
	live := time.Now()
	s.complete(t, 3)
	head := logHead(t, s.pool)
	deadline := time.Now().Add(20 * time.Second)
	var behind []string
	for {
		var status struct {
			Projections []struct {
				Name     string `json:"name"`
				Position int64  `json:"position"`
			} `json:"projections"`
		}
		s.mustArr(&status, "projections", "status", "--json", "--sample", "0s")
		passed := map[string]bool{}
		for _, p := range status.Projections {
			passed[p.Name] = p.Position >= head
		}
		behind = behind[:0]
		for _, f := range files {
			if created[f.file] && !passed[f.projection] {
				behind = append(behind, f.projection)
			}
		}
		if len(behind) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(behind) > 0 {
		t.Logf("projections not past position %d after 20 s: %v", head, behind)
	}
	step("", "the running arr up, applying later events")

	// What probe recorded, read with arr projections query (the rows of
	// log that the build and the running arr up made, then those of the
	// rebuild, which makes log anew); and what the analyst's readers run.
	records := map[string][]probeRecord{}
	roles := map[string]string{}
	readLogs := func(when string) {
		t.Helper()
		var secrets []string
		rows, err := s.pool.Query(ctx, `SELECT secret_hash FROM rm_identity.api_keys UNION ALL SELECT event_id::text FROM events`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			secrets = append(secrets, v)
		}
		if len(secrets) < 2 {
			t.Fatalf("%d key hashes and event ids to look for", len(secrets))
		}
		for _, f := range files {
			if !created[f.file] {
				continue
			}
			// The projection's role: the owner of its table log, which its DDL
			// made.
			var role string
			var super bool
			if err := s.pool.QueryRow(ctx, `SELECT r.rolname, r.rolsuper FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner
			WHERE c.oid = to_regclass($1)`, pgx.Identifier{"rm_" + f.projection, "log"}.Sanitize()).Scan(&role, &super); err != nil {
				t.Errorf("%s: the owner of rm_%s.log: %v", f.file, f.projection, err)
				continue
			}
			if role == arrUser || super {
				t.Errorf("%s: rm_%s.log is owned by %s (arr's user is %s; superuser: %v)", f.file, f.projection, role, arrUser, super)
			}
			roles[f.file] = role
			out, errOut, code := s.arr("projections", "query", f.projection,
				`SELECT at, route, schema_name, session_user_name, current_user_name, user_after, set_config_role, set_role, reset_role,
			canary, canary_seq, events, api_keys, grant_program, copy_program FROM log ORDER BY at`, "--format", "json", "--max-rows", "0")
			if code != 0 {
				t.Errorf("%s: query of log: exit %d: %s", f.file, code, errOut)
				continue
			}
			for _, v := range secrets {
				if strings.Contains(out, v) {
					t.Errorf("%s: the projection's table log holds %q, read from arr's tables (%s)", f.file, v, when)
				}
			}
			var recs []probeRecord
			if strings.TrimSpace(out) != "" {
				if err := json.Unmarshal([]byte(out), &recs); err != nil {
					t.Fatalf("%s: query output %q: %v", f.file, out, err)
				}
			}
			for i := range recs {
				recs[i].role, recs[i].when = role, when
			}
			records[f.file] = append(records[f.file], recs...)
			for _, q := range f.queries {
				if _, errOut, code := s.arr("projections", "query", f.projection, q); code != 0 {
					t.Logf("%s: query %q: exit %d: %s", f.file, q, code, strings.TrimSpace(errOut))
				}
			}
			step(f.file, "arr projections query")
		}
	}

	readLogs(readAfterUp)

	for _, f := range files {
		if !created[f.file] {
			continue
		}
		if _, errOut, code := s.arr("projections", "rebuild", f.projection); code != 0 {
			outcome[f.file] += "; rebuild failed: " + strings.TrimSpace(errOut)
		}
		step(f.file, "arr projections rebuild")
	}

	readLogs("after the rebuild")

	for _, f := range files {
		if !created[f.file] {
			continue
		}
		if _, errOut, code := s.arr("projections", "drop", f.projection, "--by", "mallory"); code != 0 {
			t.Errorf("%s: drop: exit %d: %s", f.file, code, errOut)
		}
		step(f.file, "arr projections drop")
	}

	// The verdict, file by file.
	for _, f := range files {
		role, recs := roles[f.file], records[f.file] // role: the last read
		var wrong []string                           // in order, each once
		count := map[string]int{}
		bad := func(format string, args ...any) {
			w := fmt.Sprintf(format, args...)
			if count[w] == 0 {
				wrong = append(wrong, w)
			}
			count[w]++
		}
		routes := map[string]int{}
		inUp := 0 // made by the running arr up
		for _, r := range recs {
			routes[r.Route]++
			if r.when == readAfterUp && r.At.After(live) {
				inUp++
			}
			for _, u := range []struct{ what, name string }{{"session_user", r.SessionUser}, {"current_user", r.CurrentUser}, {"current_user after its attempts", r.UserAfter}} {
				if u.name != r.role {
					bad("%s ran with %s %s (read %s)", r.Route, u.what, u.name, r.when)
				}
			}
			for _, a := range []struct{ what, how string }{{"write public.arr_canary", r.Canary}, {"move public.arr_canary_seq", r.CanarySeq},
				{"read public.events", r.Events}, {"read rm_identity.api_keys", r.APIKeys},
				{"grant itself pg_execute_server_program", r.Grant}, {"run a program", r.Program}} {
				if !strings.HasPrefix(a.how, "failed: ") && (a.what != "grant itself pg_execute_server_program" || !strings.HasPrefix(a.how, "not tried: ")) {
					bad("%s could %s: %s", r.Route, a.what, a.how)
				}
			}
		}
		if created[f.file] {
			for _, want := range f.runs {
				found := false
				for route := range routes {
					found = found || strings.HasPrefix(route, want)
				}
				if !found {
					bad("no record of %q (probe did not run there, or could not record it)", want)
				}
			}
		}
		var summary []string
		for route, n := range routes {
			summary = append(summary, fmt.Sprintf("%s ×%d", route, n))
		}
		sort.Strings(summary)
		t.Logf("%s: %s; role %s; %d records (%d by the running arr up): %s", f.file, outcome[f.file], role, len(recs), inUp, strings.Join(summary, "; "))
		// The record that shows it best: one that became another user, or
		// else one that ran in another's session.
		sort.SliceStable(recs, func(i, j int) bool { return recs[i].UserAfter != recs[i].role && recs[j].UserAfter == recs[j].role })
		for _, r := range recs {
			if r.SessionUser != r.role || r.UserAfter != r.role {
				t.Logf("  %s in %s: session_user %s, current_user %s then %s; set_config: %s; SET ROLE: %s; RESET ROLE: %s",
					r.Route, r.Schema, r.SessionUser, r.CurrentUser, r.UserAfter, r.SetConfig, r.SetRole, r.ResetRole)
				break
			}
		}
		for _, w := range counted(escapes[f.file]) {
			t.Errorf("%s: reached arr's side at %s", f.file, w)
		}
		for _, w := range wrong {
			t.Errorf("%s: %s (%d records)", f.file, w, count[w])
		}
	}
	for _, w := range counted(escapes[""]) {
		t.Errorf("reached arr's side in %s", w)
	}
}

// counted is lines, each once, in order, with how often it came if more
// than once.
func counted(lines []string) []string {
	n := map[string]int{}
	var out []string
	for _, l := range lines {
		if n[l]++; n[l] == 1 {
			out = append(out, l)
		}
	}
	for i, l := range out {
		if n[l] > 1 {
			out[i] = fmt.Sprintf("%s (×%d)", l, n[l])
		}
	}
	return out
}
