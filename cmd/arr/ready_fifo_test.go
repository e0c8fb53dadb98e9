package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestUpReadyWithAFIFOInDocs: arr up run in a directory whose docs/ holds
// a named pipe (docs/live.md, made by mkfifo: a tool streams into it) must
// still seed, say it is ready and stop on SIGTERM. The seeding opens each
// docs/*.md before it checks it is a regular file, and open(2) of a FIFO
// blocks until a writer comes: the "ready" line never appears, the seeded
// index stays empty, and the blocked open holds up the shutdown.
func TestUpReadyWithAFIFOInDocs(t *testing.T) {
	e := newEnv(t)
	e.workDir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(e.workDir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.workDir, "README.md"), []byte("# Notes\n\nSign-in links are valid for fifteen minutes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// And a link out of the tree to a file the operator never meant to
	// publish: arr seeds its own documents, built in, never these.
	secret := filepath.Join(t.TempDir(), "credentials.md")
	if err := os.WriteFile(secret, []byte("# Credentials\n\nOPENAI_API_KEY=sk-the-operators-private-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(e.workDir, "docs", "notes.md")); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(e.workDir, "docs", "live.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// Whatever happens, free a blocked open when the test ends, so the
	// process can stop.
	t.Cleanup(func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
	})
	e.extraEnv = append(e.extraEnv, "ARR_LOG_LEVEL=info", "ARR_SHUTDOWN_GRACE=5s")
	p := e.up()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(p.logs.String(), "msg=ready") && time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("arr up exited; logs:\n%s", p.logs.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	ready := strings.Contains(p.logs.String(), "msg=ready")
	if !ready {
		t.Errorf("arr up with a FIFO at docs/live.md never logged ready in 60s (it is blocked opening the pipe)")
	}
	if ready {
		e.createAccount("fifo@example.com", "free")
		k := e.mint("fifo@example.com", "answer")
		for _, q := range []string{"What is the OPENAI_API_KEY in the credentials?", "How long are sign-in links valid?"} {
			code, body := postJSON(t, e.answer+"/api/v1/answer", []byte(`{"q":"`+q+`"}`), map[string]string{"Authorization": "Bearer " + k.Secret})
			raw, _ := json.Marshal(body)
			if code != 200 || strings.Contains(string(raw), "sk-the-operators-private-key") || strings.Contains(string(raw), "fifteen minutes") {
				t.Errorf("%q: %d; the answer draws on the working directory's files: %s", q, code, raw)
			}
		}
	}
	start := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("arr up took %s to stop after SIGTERM with ARR_SHUTDOWN_GRACE=5s", d)
		}
	case <-time.After(15 * time.Second):
		t.Errorf("arr up did not stop within 15s of SIGTERM (ARR_SHUTDOWN_GRACE=5s): the seeding is stuck opening docs/live.md")
	}
	if !ready {
		t.Logf("logs:\n%s", p.logs.String())
	}
}
