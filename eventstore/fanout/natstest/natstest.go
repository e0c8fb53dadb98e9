package natstest

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// Start starts a private `nats-server -js` on a free loopback port with
// its storage in a temporary directory, waits until JetStream answers, and
// kills it when the test ends. It returns the server's URL.
func Start(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs nats-server with JetStream; runs without -short (scripts/test.sh)")
	}
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		t.Fatalf("nats-server not found on PATH (%v): install nats-server (scripts/test.sh does)", err)
	}
	port := FreePort(t)
	out := &syncBuffer{}
	cmd := exec.Command(bin, "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", t.TempDir())
	cmd.Stdout, cmd.Stderr = out, out
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for !jetStreamReady(url) {
		select {
		case <-exited:
			t.Fatalf("nats-server exited before accepting connections (%v):\n%s", waitErr, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nats-server on %s did not become ready in 20s:\n%s", url, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return url
}

func jetStreamReady(url string) bool {
	nc, err := nats.Connect(url, nats.Timeout(time.Second), nats.NoReconnect())
	if err != nil {
		return false
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		return false
	}
	_, err = js.AccountInfo()
	return err == nil
}

// FreePort returns a free TCP port on 127.0.0.1.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer collects a child process's output while it runs.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
