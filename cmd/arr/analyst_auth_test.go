package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// startScramPG starts a private PostgreSQL cluster on loopback whose
// pg_hba.conf asks every user but postgres for a SCRAM-SHA-256 password
// over TCP, and logs every statement (log_statement = all). It returns
// the superuser's URL of database postgres and the cluster.
func startScramPG(t *testing.T) (*replicatedPG, int) {
	t.Helper()
	p := &replicatedPG{t: t, bin: pgBinDir(t)}
	dir, err := os.MkdirTemp("", "arr-scram-")
	if err != nil {
		t.Fatal(err)
	}
	p.dir = dir
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			t.Fatalf("running as root without a postgres user to run PostgreSQL as: %v", err)
		}
		p.runAs = "postgres"
		if out, err := exec.Command("chown", "postgres", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	port := freePort(t)
	data := filepath.Join(dir, "data")
	p.run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
	conf := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nfsync = off\nsynchronous_commit = off\npassword_encryption = 'scram-sha-256'\nlog_statement = 'all'\nlog_connections = on\n", dir)
	appendFile(t, filepath.Join(data, "postgresql.conf"), conf)
	hba := "local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n"
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	if p.runAs != "" {
		if out, err := exec.Command("chown", "postgres", filepath.Join(data, "pg_hba.conf")).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	p.run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "server.log"), "-o", "-p "+strconv.Itoa(port), "-w", "start")
	t.Cleanup(func() { p.stop("data") })
	p.primaryURL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return p, port
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestSQLProjectionRolesLogInWithPasswords (issue 36, finding 1): on a
// PostgreSQL 15 cluster that asks every user for a SCRAM password (no
// trust over TCP), arr run as a role that is not a superuser (set up with
// scripts/superuser-setup.sql) builds, follows and queries a SQL
// projection by logging in as its role with the password it derives;
// the role's password is a SCRAM verifier, a wrong one is refused, and
// no statement in the server's log carries a password in clear.
func TestSQLProjectionRolesLogInWithPasswords(t *testing.T) {
	ctx := context.Background()
	pg, port := startScramPG(t)
	pg.exec(pg.primaryURL, `CREATE ROLE arr LOGIN CREATEROLE PASSWORD 'arr-test-password'`)
	pg.exec(pg.primaryURL, `CREATE DATABASE arr OWNER arr TEMPLATE template0`)
	adminDB := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/arr?sslmode=disable", port)
	if out, err := exec.Command("psql", "-X", "-q", "-d", adminDB, "-v", "arr_role=arr", "-f", "../../scripts/superuser-setup.sql").CombinedOutput(); err != nil {
		t.Fatalf("scripts/superuser-setup.sql: %v\n%s", err, out)
	}
	dbURL := fmt.Sprintf("postgres://arr:arr-test-password@127.0.0.1:%d/arr?sslmode=disable", port)
	e := &env{t: t, dbURL: dbURL}
	up := upstreamtest.Start(t)
	e.extraEnv = append(e.extraEnv, "ARR_UPSTREAM_BASE_URL="+up.URL, "ARR_UPSTREAM_API_KEY=sk-test-upstream")
	s := &sandbox{gw: &gw{env: e, up: up, proc: e.up()}, pool: openPool(t, dbURL), dir: t.TempDir()}
	e.createAccount("scram@example.com", "enterprise")
	s.key = e.mint("scram@example.com", "gateway").Secret
	s.complete(t, 2)
	s.mustArr(nil, "projections", "create", s.file(t, "spend.sql", spendByModel), "--by", "analyst")
	s.complete(t, 2)
	waitSpend(t, s.gw, s.pool, "on a cluster that asks for passwords")
	out, errOut, code := s.arr("projections", "query", "spend_by_model", "SELECT session_user AS who, sum(n) AS n FROM spend GROUP BY 1", "--format", "csv")
	role := strings.ReplaceAll(rolePrefix(t, s.pool), `\`, "") + "spend_by_model"
	if code != 0 || !strings.Contains(out, role+",4") {
		t.Fatalf("query: exit %d, %q %q; want 4 completions counted in a session of %s", code, out, errOut, role)
	}

	admin, err := pgx.Connect(ctx, adminDB)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var verifier string
	if err := admin.QueryRow(ctx, `SELECT coalesce(rolpassword, '') FROM pg_authid WHERE rolname = $1`, role).Scan(&verifier); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(verifier, "SCRAM-SHA-256$4096:") {
		t.Fatalf("%s's password is stored as %.14q…, want a SCRAM-SHA-256 verifier", role, verifier)
	}
	wrong := fmt.Sprintf("postgres://%s:wrong@127.0.0.1:%d/arr?sslmode=disable", role, port)
	if c, err := pgx.Connect(ctx, wrong); err == nil {
		c.Close(ctx)
		t.Fatalf("%s logged in with a wrong password", role)
	} else if !strings.Contains(err.Error(), "password authentication failed") {
		t.Fatalf("a wrong password: %v", err)
	}
	// The role may set its own password (PostgreSQL lets every role):
	// that locks arr out until arr sets its own again, which it does at
	// the next login; the password the analyst chose then works no more.
	mine := "-- arr:projection mine\nCREATE TABLE t (n bigint);\nALTER ROLE CURRENT_USER PASSWORD 'analyst-chosen';\n-- arr:on CompletionRecorded\nINSERT INTO t VALUES (:position);\n"
	s.mustArr(nil, "projections", "create", s.file(t, "mine.sql", mine), "--by", "mallory")
	s.complete(t, 1)
	head := logHead(t, s.pool)
	eventually(t, 30*time.Second, "mine to pass the new completion", func() bool {
		return count(t, s.pool, fmt.Sprintf(`SELECT count(*) FROM projection_checkpoints WHERE name = 'mine' AND position >= %d`, head)) == 1
	})
	chosen := fmt.Sprintf("postgres://%s:analyst-chosen@127.0.0.1:%d/arr?sslmode=disable", strings.TrimSuffix(role, "spend_by_model")+"mine", port)
	if c, err := pgx.Connect(ctx, chosen); err == nil {
		c.Close(ctx)
		t.Fatal("the password the analyst chose still logs in")
	}
	log, err := os.ReadFile(filepath.Join(pg.dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	var alters int
	for _, line := range strings.Split(string(log), "\n") {
		i := strings.Index(strings.ToUpper(line), "PASSWORD '")
		if i < 0 || strings.Contains(line, "arr-test-password") || strings.Contains(line, "analyst-chosen") { // the test's own
			continue
		}
		alters++
		if !strings.HasPrefix(line[i+len("PASSWORD '"):], "SCRAM-SHA-256$") {
			t.Fatalf("the server's log has a password that is not a SCRAM verifier: %s", line)
		}
	}
	if alters == 0 || !strings.Contains(string(log), "connection authorized: user="+role) {
		t.Fatalf("the log shows %d passwords set and no login of %s: arr did not log in as the role", alters, role)
	}
}
