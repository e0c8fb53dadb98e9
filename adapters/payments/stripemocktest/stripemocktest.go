// Package stripemocktest starts a private stripe-mock for a test, so tests
// talk to a real HTTP server that validates requests against Stripe's
// OpenAPI document. scripts/test.sh installs stripe-mock when missing.
package stripemocktest

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// APIKey is a test-mode key stripe-mock accepts.
const APIKey = "sk_test_123"

// Version is the stripe-mock release scripts/test.sh installs.
const Version = "v0.203.0"

var listening = regexp.MustCompile(`Listening for HTTP at address: (\S+)`)

// Binary finds stripe-mock in PATH or in $(go env GOPATH)/bin. It fails the
// test, saying how to install it, when it is in neither.
func Binary(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("stripe-mock"); err == nil {
		return p
	}
	var dirs []string
	if gp, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, d := range filepath.SplitList(strings.TrimSpace(string(gp))) {
			dirs = append(dirs, filepath.Join(d, "bin"))
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "stripe-mock")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	t.Fatalf("stripe-mock not found in PATH or $(go env GOPATH)/bin: run scripts/test.sh (it installs stripe-mock), or go install github.com/stripe/stripe-mock@%s", Version)
	return ""
}

// Start runs stripe-mock on a free loopback port (HTTPS on a private Unix
// socket, so parallel tests never collide), waits until it answers, and
// stops it when the test ends. It returns the base URL for STRIPE_API_BASE.
func Start(t testing.TB) string {
	t.Helper()
	bin := Binary(t)
	dir, err := os.MkdirTemp("", "stripe-mock-") // short: Unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:0", "-https-unix", filepath.Join(dir, "https.sock"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	addr := make(chan string, 1)
	var logs strings.Builder
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if !sent {
				logs.WriteString(line + "\n")
				if m := listening.FindStringSubmatch(line); m != nil {
					addr <- m[1]
					sent = true
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-done:
		t.Fatalf("stripe-mock exited before listening:\n%s", logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("stripe-mock did not report its address within 30s")
	}
	waitReady(t, base)
	return base
}

// waitReady polls an authenticated GET until stripe-mock answers 200.
func waitReady(t testing.TB, base string) {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/balance", nil)
		req.SetBasicAuth(APIKey, "")
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("stripe-mock at %s does not answer GET /v1/balance: %v", base, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
