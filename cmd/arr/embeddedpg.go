package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// embeddedPG is the private PostgreSQL arr starts under its data directory
// when no DATABASE_URL is given, from the PostgreSQL binaries installed on
// the machine. It listens on 127.0.0.1 only, with trust auth for the local
// user.
type embeddedPG struct {
	dir  string
	port int
	bin  string
	log  *slog.Logger
	// runAs is the unprivileged user to run PostgreSQL as when arr runs as
	// root (PostgreSQL refuses to run as root).
	runAs string
}

func newEmbeddedPG(dataDir string, port int, log *slog.Logger) (*embeddedPG, error) {
	abs, err := filepath.Abs(filepath.Join(dataDir, "pg"))
	if err != nil {
		return nil, err
	}
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	e := &embeddedPG{dir: abs, port: port, bin: bin, log: log}
	if os.Geteuid() == 0 {
		for _, u := range []string{"postgres", "nobody"} {
			if _, err := user.Lookup(u); err == nil {
				e.runAs = u
				break
			}
		}
		if e.runAs == "" {
			return nil, errors.New("embedded PostgreSQL: running as root and found no postgres or nobody user to run it as")
		}
	}
	return e, nil
}

// postgresBinDir finds initdb and pg_ctl: pg_config --bindir, then the
// newest /usr/lib/postgresql/*/bin, then PATH.
func postgresBinDir() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		d := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgMajor(dirs[i]) > pgMajor(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server binaries (initdb) found: install PostgreSQL with PostGIS (scripts/up.sh does) or set DATABASE_URL")
}

func pgMajor(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func (e *embeddedPG) dataDir() string { return filepath.Join(e.dir, "data") }

func (e *embeddedPG) cmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	path := filepath.Join(e.bin, name)
	if e.runAs != "" {
		return exec.CommandContext(ctx, "runuser", append([]string{"-u", e.runAs, "--", path}, args...)...)
	}
	return exec.CommandContext(ctx, path, args...)
}

func (e *embeddedPG) run(ctx context.Context, name string, args ...string) error {
	out, err := e.cmd(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// URL is the connection string of the embedded server's arr database.
func (e *embeddedPG) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/arr?sslmode=disable", e.port)
}

// Start initializes the cluster on first use and starts it unless it is
// already running. started says whether this call started it (and so
// whether Stop should stop it).
func (e *embeddedPG) Start(ctx context.Context) (started bool, err error) {
	// The data directory's parents must be traversable by the user
	// PostgreSQL runs as; the cluster directory itself is private to it.
	if err := os.MkdirAll(filepath.Dir(e.dir), 0o755); err != nil {
		return false, fmt.Errorf("embedded PostgreSQL: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(e.dir, "run"), 0o700); err != nil {
		return false, fmt.Errorf("embedded PostgreSQL: %w", err)
	}
	if e.runAs != "" {
		if out, err := exec.CommandContext(ctx, "chown", "-R", e.runAs, e.dir).CombinedOutput(); err != nil {
			return false, fmt.Errorf("embedded PostgreSQL: chown: %w: %s", err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(e.dataDir(), "PG_VERSION")); err != nil {
		e.log.Info("initializing the embedded PostgreSQL", "dir", e.dataDir())
		if err := e.run(ctx, "initdb", "-D", e.dataDir(), "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-locale"); err != nil {
			return false, fmt.Errorf("embedded PostgreSQL: %w", err)
		}
	}
	up, err := e.running(ctx)
	if err != nil {
		return false, err
	}
	if !up {
		if err := e.portFree(); err != nil {
			return false, err
		}
		opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories=%s", e.port, filepath.Join(e.dir, "run"))
		if err := e.run(ctx, "pg_ctl", "start", "-w", "-t", "60", "-D", e.dataDir(), "-l", filepath.Join(e.dir, "postgres.log"), "-o", opts); err != nil {
			return false, fmt.Errorf("embedded PostgreSQL: %w (see %s)", err, filepath.Join(e.dir, "postgres.log"))
		}
		started = true
	}
	if err := e.ensureDatabase(ctx); err != nil {
		return started, err
	}
	return started, nil
}

// running reports whether this data directory's server runs: pg_ctl says
// so, and the process its lock file (postmaster.pid) names is this
// directory's server. After a crash or a power loss that file stays, and
// its PID may have been given to another process since, which pg_ctl,
// checking only that the PID is alive, takes for the server, and for
// which PostgreSQL itself refuses to start. A postmaster works in its data
// directory (it changes into it at start), so a live process working in
// another one is not it: that is an error naming the file, the process and
// what to do. arr never removes the file itself: from another PID
// namespace (a container sharing the directory) the PID may name anything
// while the server lives, and a second server on one directory corrupts
// it. When the process cannot be looked at, the connection tells.
func (e *embeddedPG) running(ctx context.Context) (bool, error) {
	if e.cmd(ctx, "pg_ctl", "status", "-D", e.dataDir()).Run() != nil {
		return false, nil
	}
	lock := filepath.Join(e.dataDir(), "postmaster.pid")
	b, err := os.ReadFile(lock)
	if err != nil {
		return true, nil
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return true, nil
	}
	cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
	if err != nil || same(cwd, e.dataDir()) {
		return true, nil
	}
	exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	return false, fmt.Errorf("embedded PostgreSQL: its lock file %s names process %d (%s, working in %s), which is not the server of %s: "+
		"the lock is left from a crash or a power loss. If no PostgreSQL runs on %s (in no container either), remove %s and run the command again",
		lock, pid, exe, cwd, e.dataDir(), e.dataDir(), lock)
}

// same reports whether two paths name one directory.
func same(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return os.SameFile(fa, fb)
}

// portFree fails, saying what to do, when something already listens on
// the embedded server's port: another arr's embedded PostgreSQL (another
// ARR_DATA_DIR) or a server of the machine's own.
func (e *embeddedPG) portFree() error {
	addr := fmt.Sprintf("127.0.0.1:%d", e.port)
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil
	}
	_ = c.Close()
	return fmt.Errorf("embedded PostgreSQL: %s is taken by another server (another arr's embedded PostgreSQL, of another ARR_DATA_DIR than %s, or one of this machine's): "+
		"run this command with that arr's ARR_DATA_DIR, or give this one another port with ARR_EMBEDDED_PG_PORT, or set DATABASE_URL", addr, filepath.Dir(e.dir))
}

func (e *embeddedPG) ensureDatabase(ctx context.Context) error {
	var conn *pgx.Conn
	var err error
	for i := 0; i < 50; i++ {
		conn, err = pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", e.port))
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("embedded PostgreSQL: connecting to 127.0.0.1:%d: %w (the server of %s does not answer; see %s; if no PostgreSQL runs on that directory, "+
			"its lock file %s is left from a crash: remove it and run the command again)", e.port, err, e.dataDir(),
			filepath.Join(e.dir, "postgres.log"), filepath.Join(e.dataDir(), "postmaster.pid"))
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'arr')`).Scan(&exists); err != nil {
		return fmt.Errorf("embedded PostgreSQL: %w", err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, `CREATE DATABASE arr`); err != nil {
			return fmt.Errorf("embedded PostgreSQL: creating database arr: %w", err)
		}
	}
	return nil
}

// Stop stops the server (fast shutdown: in-flight transactions roll back,
// committed data is safe).
func (e *embeddedPG) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return e.run(ctx, "pg_ctl", "stop", "-D", e.dataDir(), "-m", "fast", "-w")
}
