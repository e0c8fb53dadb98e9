package main_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arr-dev/arr/commands"
)

// replicatedPG is a private PostgreSQL primary and its streaming replica
// on loopback, made with the machine's PostgreSQL binaries (initdb,
// pg_basebackup -R), run as the postgres user when the test runs as root.
type replicatedPG struct {
	t                      *testing.T
	bin, dir, runAs        string
	primaryURL, replicaURL string
}

func pgBinDir(t *testing.T) string {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		d := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(d, "pg_basebackup")); err == nil {
			return d
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return a > b
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_basebackup")); err == nil {
			return d
		}
	}
	t.Fatal("no PostgreSQL server binaries (initdb, pg_basebackup) found: scripts/test.sh installs them")
	return ""
}

func (p *replicatedPG) run(name string, args ...string) string {
	p.t.Helper()
	path := filepath.Join(p.bin, name)
	cmd := exec.Command(path, args...)
	if p.runAs != "" {
		cmd = exec.Command("runuser", append([]string{"-u", p.runAs, "--", path}, args...)...)
	}
	cmd.Dir = p.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func startReplicatedPG(t *testing.T) *replicatedPG {
	t.Helper()
	p := &replicatedPG{t: t, bin: pgBinDir(t)}
	dir, err := os.MkdirTemp("", "arr-replica-")
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
	primary, replica := freePort(t), freePort(t)
	p.run("initdb", "-D", filepath.Join(dir, "primary"), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
	conf := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nwal_level = replica\nmax_wal_senders = 5\nhot_standby = on\nfsync = off\nsynchronous_commit = off\n", dir)
	f, err := os.OpenFile(filepath.Join(dir, "primary", "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(conf)
	f.Close()
	p.run("pg_ctl", "-D", filepath.Join(dir, "primary"), "-l", filepath.Join(dir, "primary.log"), "-o", "-p "+strconv.Itoa(primary), "-w", "start")
	t.Cleanup(func() { p.stop("primary") })
	p.run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(primary), "-U", "postgres", "-D", filepath.Join(dir, "replica"), "-R", "-X", "stream", "-c", "fast")
	p.run("pg_ctl", "-D", filepath.Join(dir, "replica"), "-l", filepath.Join(dir, "replica.log"), "-o", "-p "+strconv.Itoa(replica), "-w", "start")
	t.Cleanup(func() { p.stop("replica") })
	p.primaryURL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", primary)
	p.replicaURL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", replica)
	return p
}

// stop stops one of the two servers (immediate: as a crash would).
func (p *replicatedPG) stop(which string) {
	path := filepath.Join(p.bin, "pg_ctl")
	args := []string{"-D", filepath.Join(p.dir, which), "-m", "immediate", "stop"}
	cmd := exec.Command(path, args...)
	if p.runAs != "" {
		cmd = exec.Command("runuser", append([]string{"-u", p.runAs, "--", path}, args...)...)
	}
	_ = cmd.Run()
}

func (p *replicatedPG) exec(url, sql string) {
	p.t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		p.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		p.t.Fatalf("%s: %v", sql, err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	a := freeAddr(t)
	n, err := strconv.Atoi(a[strings.LastIndex(a, ":")+1:])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

type replicaHealth struct {
	Status      string   `json:"status"`
	Problems    []string `json:"problems"`
	ReadReplica *struct {
		Status     string  `json:"status"`
		Reads      string  `json:"reads"`
		LagSeconds float64 `json:"lag_seconds"`
	} `json:"read_replica"`
}

// waitReplica polls /healthz until the read replica is in state and reads
// go to reads.
func waitReplica(t *testing.T, base, state, reads string) replicaHealth {
	t.Helper()
	var h replicaHealth
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		getJSON(t, base+"/healthz", nil, 200, &h)
		if h.ReadReplica != nil && h.ReadReplica.Status == state && h.ReadReplica.Reads == reads {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("the read replica did not become %s (reads %s): %+v %+v", state, reads, h, h.ReadReplica)
		}
	}
}

// TestReadReplica: with ARR_READ_DATABASE_URL the records service reads
// its read models from a streaming replica, and:
//   - a list another process imported while the replica is stopped
//     replaying is not seen while the
//     replica lags less than ARR_READ_MAX_LAG (a bounded stale read: the
//     proof that reads go to the replica), and is once it lags more
//     (reads go to the primary; /healthz says so);
//   - a write made by the service itself is read back at once
//     (read-your-writes: it waited for the replica, then read the
//     primary);
//   - a key minted or revoked meanwhile is right at once (keys are
//     checked on the primary);
//   - the replica replaying again is read again; stopped, the service
//     falls back to the primary and still answers.
func TestReadReplica(t *testing.T) {
	pg := startReplicatedPG(t)
	e := &env{t: t, dbURL: pg.primaryURL, dataDir: t.TempDir()}
	e.extraEnv = append(e.extraEnv, "ARR_READ_DATABASE_URL="+pg.replicaURL, "ARR_READ_MAX_LAG=15s", "ARR_READ_YOUR_WRITES_TIMEOUT=3s",
		"ARR_MASTER_KEY="+testMasterKey)
	e.up()
	e.createAccount("alice@example.com", "free")
	alice := e.mint("alice@example.com", "records")
	keyed := map[string]string{"X-API-Key": alice.Secret}
	waitReplica(t, e.records, "ok", "replica")
	dir := t.TempDir()
	importList := func(name string) string {
		t.Helper()
		f := filepath.Join(dir, name+".csv")
		if err := os.WriteFile(f, []byte("apn,county,address\n0001-003,24510,2041 W NORTH AVE\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var l struct {
			ListID string `json:"list_id"`
		}
		e.mustArr(&l, "import", "list", "--email", "alice@example.com", "--name", name, f, "--json")
		return l.ListID
	}
	lists := func() string {
		t.Helper()
		_, b := get(t, e.records+"/api/v1/lists", keyed)
		return string(b)
	}
	first := importList("first")
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(lists(), first); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a list imported before the pause is missing: %s", lists())
		}
	}

	// The replica stops replaying.
	pg.exec(pg.replicaURL, `SELECT pg_wal_replay_pause()`)
	paused := time.Now()

	// Another process's write is not read while the replica lags less
	// than ARR_READ_MAX_LAG (that process waited for the replica as long
	// as ARR_READ_YOUR_WRITES_TIMEOUT, then read the primary itself).
	second := importList("second")
	if got := lists(); strings.Contains(got, second) {
		if time.Since(paused) < 12*time.Second {
			t.Fatalf("a list imported while the replica is paused was read %s after the pause: the reads do not go to the replica", time.Since(paused))
		}
		t.Logf("the machine was too slow to see the stale read (%s after the pause)", time.Since(paused))
	}

	// Keys are checked on the primary: a new key works, a revoked one
	// does not, at once.
	bobKey := e.mint("alice@example.com", "records")
	getJSON(t, e.records+"/api/v1/key", map[string]string{"X-API-Key": bobKey.Secret}, 200, nil)
	e.mustArr(nil, "keys", "revoke", "--id", bobKey.ID, "--json")
	getJSON(t, e.records+"/api/v1/key", map[string]string{"X-API-Key": bobKey.Secret}, 401, nil)

	// A write the service makes itself is read back at once.
	pool, st := openStore(t, e.dbURL)
	cmds, err := commands.New(commands.Config{Store: st, Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	token, _ := session(t, pool, cmds, "alice@example.com")
	form := url.Values{"list_id": {first}, "url": {"https://example.com/hook"}, "csrf_token": {csrfFor(token)}}
	req, _ := http.NewRequest(http.MethodPost, e.records+"/account/monitors", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", "arr_session="+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("creating a monitor from the page: %d", resp.StatusCode)
	}
	var mons struct {
		Total int `json:"total"`
	}
	getJSON(t, e.records+"/api/v1/monitors", keyed, 200, &mons)
	if mons.Total != 1 {
		t.Fatalf("the monitor just made is not read back: %+v", mons)
	}
	h := waitReplica(t, e.records, "lagging", "primary")
	if h.Status != "degraded" || len(h.Problems) == 0 {
		t.Fatalf("a lagging replica is not reported: %+v", h)
	}
	if !strings.Contains(lists(), second) {
		t.Fatal("reading the primary, the list is still missing")
	}

	// Replaying again, the replica is read again.
	pg.exec(pg.replicaURL, `SELECT pg_wal_replay_resume()`)
	waitReplica(t, e.records, "ok", "replica")
	if !strings.Contains(lists(), second) {
		t.Fatal("the replica caught up but the list is missing")
	}

	// Stopped, the service reads the primary and still answers.
	pg.stop("replica")
	if got := lists(); !strings.Contains(got, first) || !strings.Contains(got, second) {
		t.Fatalf("with the replica stopped: %s", got)
	}
	waitReplica(t, e.records, "down", "primary")
	getJSON(t, e.records+"/api/v1/monitors", keyed, 200, &mons)
}
