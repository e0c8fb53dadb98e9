package main_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"regexp"
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

// TestUpSaysWhatToTryOnATerminal: on a terminal, arr up says once, when
// its first requests would be answered, where the three services are and
// how to get a first key and ask a first question; the JSON logs never
// repeat it; and the commands it prints work as printed.
func TestUpSaysWhatToTryOnATerminal(t *testing.T) {
	e := embeddedEnv(t)
	a, g, r := freeAddr(t), freeAddr(t), freeAddr(t)
	e.answer, e.gateway, e.records = "http://"+a, "http://"+g, "http://"+r
	e.extraEnv = append(e.extraEnv, "ARR_LOG_FORMAT=json", "ARR_ANSWER_ADDR="+a, "ARR_GATEWAY_ADDR="+g, "ARR_RECORDS_ADDR="+r)
	p := startOnTerminal(t, e, "up")
	deadline := time.Now().Add(4 * time.Minute)
	for !strings.Contains(p.text(), "Ctrl-C stops arr.") {
		select {
		case <-p.done:
			t.Fatalf("arr up exited before it said it was ready:\n%s", p.text())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ready message after 4 minutes:\n%s", p.text())
		}
	}
	time.Sleep(3 * time.Second) // anything printed twice is printed by now
	out := p.text()
	if n := strings.Count(out, "arr is ready"); n != 1 {
		t.Fatalf("the ready message is printed %d times:\n%s", n, out)
	}
	var message []string
	readyLogs := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "{") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Errorf("a JSON log line does not parse: %v: %s", err, line)
			}
			if strings.Contains(line, "A first key") || strings.Contains(line, "accounts create") {
				t.Errorf("a JSON log line repeats the ready message: %s", line)
			}
			if rec["msg"] == "ready" {
				readyLogs++
			}
			continue
		}
		message = append(message, line)
	}
	if readyLogs != 1 {
		t.Errorf("%d ready log lines, want one", readyLogs)
	}
	text := strings.Join(message, "\n")
	for _, want := range []string{e.answer + "/api/v1/answer", e.gateway + "/v1", e.records + "/api/v1/parcels", "/openapi.json", "/map",
		binary + " accounts create --email you@example.com", binary + " keys mint --email you@example.com --service answer",
		"curl -s", "The gateway has no upstream yet", "ARR_UPSTREAM_BASE_URL=", "Ctrl-C stops arr."} {
		if !strings.Contains(text, want) {
			t.Errorf("the ready message lacks %q:\n%s", want, text)
		}
	}

	// The commands, as printed, give a key and an answer.
	cmds := regexp.MustCompile(`(?m)^  (`+regexp.QuoteMeta(binary)+` .*|ANSWER_KEY=.*|curl .*)$`).FindAllStringSubmatch(text, -1)
	if len(cmds) != 3 {
		t.Fatalf("want the three commands of a first key and question, found %d:\n%s", len(cmds), text)
	}
	var script []string
	for _, c := range cmds {
		script = append(script, c[1])
	}
	stdout, _ := e.script("the ready message's commands", strings.Join(script, "\n"))
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var answer struct {
		Answer string `json:"answer"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &answer); err != nil || !strings.Contains(answer.Answer, "15 minutes") {
		t.Fatalf("the ready message's question got: %v %s", err, stdout)
	}
}
