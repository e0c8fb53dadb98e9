package main_test

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestEmbeddedPGStalePidFile: the embedded PostgreSQL of a machine that
// lost power leaves data/postmaster.pid behind, and after the reboot its
// PID is as likely as not some other live process of the same user. arr
// asks `pg_ctl status`, which only checks that the PID is alive, takes the
// server for running, skips the start, and fails 5 seconds later with a
// bare "connecting: ... connection refused": the portFree advice is never
// reached and nothing says to remove the stale file. The next command
// must either work or name postmaster.pid and what to do with it.
func TestEmbeddedPGStalePidFile(t *testing.T) {
	e := embeddedEnv(t)
	e.workDir = t.TempDir()
	if _, errs, code := e.arr("accounts", "create", "--email", "first@example.com"); code != 0 {
		t.Fatalf("first command on the embedded PostgreSQL: exit %d: %s", code, errs)
	}
	pidFile := filepath.Join(e.dataDir, "pg", "data", "postmaster.pid")
	if _, err := os.Stat(pidFile); err == nil {
		t.Fatalf("%s is still there after the command stopped its embedded PostgreSQL", pidFile)
	}
	// A live process of the user PostgreSQL runs as, with the PID the
	// lost server's file names.
	other := exec.Command("sleep", "300")
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, arr runs PostgreSQL as postgres, and there is no postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		other.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	port := ""
	for _, kv := range e.extraEnv {
		if v, ok := strings.CutPrefix(kv, "ARR_EMBEDDED_PG_PORT="); ok {
			port = v
		}
	}
	stale := strconv.Itoa(other.Process.Pid) + "\n" + filepath.Join(e.dataDir, "pg", "data") + "\n1700000000\n" + port + "\n"
	if err := os.WriteFile(pidFile, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := e.arr("accounts", "create", "--email", "second@example.com")
	if code != 0 && !strings.Contains(errs, "postmaster.pid") {
		t.Fatalf("after a crash left a postmaster.pid naming a live process (PID %d, not PostgreSQL), arr exits %d without naming the file or what to do:\n%s",
			other.Process.Pid, code, errs)
	}
}
