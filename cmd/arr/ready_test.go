package main_test

import (
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// ptyProc is arr run on a pseudo-terminal, as a person at a terminal runs
// it: its output is what the terminal shows.
type ptyProc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func (p *ptyProc) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.ReplaceAll(p.out.String(), "\r\n", "\n")
}

func startOnTerminal(t *testing.T, e *env, args ...string) *ptyProc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env, cmd.Dir = e.environ(), e.workDir
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		t.Fatalf("starting arr on a pseudo-terminal: %v", err)
	}
	p := &ptyProc{cmd: cmd, done: make(chan struct{})}
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 32<<10)
		for {
			n, err := f.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		_ = f.Close()
		<-read
	})
	return p
}
