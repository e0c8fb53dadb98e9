package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEmbeddedPGLiveWrappedServerKeepsItsLock: on NixOS, PostgreSQL with
// PostGIS (which arr needs) is postgresql.withPackages, whose bin/postgres
// is a makeWrapper script exec'ing bin/.postgres-wrapped: the live
// postmaster's /proc/PID/exe ends in ".postgres-wrapped", not "postgres".
// arr's stale-lock check then takes the LIVE server of its own data
// directory for a stranger and deletes its postmaster.pid. A live
// postmaster rechecks its lock file once a minute and, finding it gone,
// performs an immediate shutdown: any second arr command (arr keys mint
// while arr up runs) kills the running arr's database. Here the live
// server runs from a copy of the postgres binary named .postgres-wrapped,
// as the Nix wrapper runs it; a CLI command on the same data directory
// must leave its lock alone (and may use the running server).
func TestEmbeddedPGLiveWrappedServerKeepsItsLock(t *testing.T) {
	e := embeddedEnv(t)
	e.workDir = t.TempDir()
	if _, errs, code := e.arr("accounts", "create", "--email", "first@example.com"); code != 0 {
		t.Fatalf("first command on the embedded PostgreSQL: exit %d: %s", code, errs)
	}
	port := ""
	for _, kv := range e.extraEnv {
		if v, ok := strings.CutPrefix(kv, "ARR_EMBEDDED_PG_PORT="); ok {
			port = v
		}
	}
	out, err := exec.Command("pg_config", "--bindir").Output()
	if err != nil {
		t.Fatalf("pg_config: %v", err)
	}
	bin := strings.TrimSpace(string(out))
	// The layout of a wrapped installation: bin/.postgres-wrapped, lib/.
	inst := filepath.Join(e.dataDir, "nix")
	if err := os.MkdirAll(filepath.Join(inst, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := os.ReadFile(filepath.Join(bin, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	wrapped := filepath.Join(inst, "bin", ".postgres-wrapped")
	if err := os.WriteFile(wrapped, real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(filepath.Dir(bin), "lib"), filepath.Join(inst, "lib")); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(e.dataDir, "pg", "data")
	pgctl := func(args ...string) *exec.Cmd {
		full := append([]string{filepath.Join(bin, "pg_ctl")}, args...)
		if os.Geteuid() == 0 {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--"}, full...)...)
		}
		return exec.Command(full[0], full[1:]...)
	}
	opts := "-p " + port + " -c listen_addresses=127.0.0.1 -c unix_socket_directories=" + filepath.Join(e.dataDir, "pg", "run")
	if out, err := pgctl("start", "-w", "-t", "60", "-D", data, "-l", filepath.Join(e.dataDir, "pg", "wrapped.log"), "-p", wrapped, "-o", opts).CombinedOutput(); err != nil {
		t.Fatalf("starting the wrapped server: %v: %s", err, out)
	}
	pidFile := filepath.Join(data, "postmaster.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _, _ := strings.Cut(string(b), "\n")
	// Stopped by its PID: pg_ctl stop cannot once its lock file is gone.
	t.Cleanup(func() {
		n, _ := strconv.Atoi(pid)
		if p, err := os.FindProcess(n); err == nil && n > 0 {
			_ = p.Signal(syscall.SIGQUIT)
			for i := 0; i < 50 && p.Signal(syscall.Signal(0)) == nil; i++ {
				time.Sleep(100 * time.Millisecond)
			}
			_ = p.Kill()
		}
	})
	exe, _ := os.Readlink(filepath.Join("/proc", pid, "exe"))
	t.Logf("live postmaster PID %s runs %s", pid, exe)

	_, errs, code := e.arr("accounts", "create", "--email", "second@example.com")
	if _, err := os.Stat(pidFile); err != nil {
		t.Fatalf("a CLI command deleted the lock file of the LIVE PostgreSQL (PID %s, %s) of its own data directory (%v); the postmaster will do an immediate shutdown when it next checks it. The command exited %d:\n%s",
			pid, exe, err, code, errs)
	}
	if code != 0 {
		t.Fatalf("with the embedded PostgreSQL running, the command exits %d:\n%s", code, errs)
	}
}
