package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arr-dev/arr/migrations/migratetest"
)

// binary is the arr binary built once for all tests in this package.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "arr-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "arr")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building arr: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is an isolated arr installation: its own database, ports and data
// directory (ARR_DATA_DIR, where the key files live), which every arr
// process of the env shares, as the processes of one installation do.
type env struct {
	t        testing.TB
	dbURL    string
	dataDir  string
	answer   string
	gateway  string
	records  string
	extraEnv []string
	// workDir is the working directory of its arr processes (empty: the
	// test's, cmd/arr).
	workDir string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return &env{t: t, dbURL: migratetest.NewDatabase(t), dataDir: t.TempDir()}
}

func (e *env) environ() []string {
	dataDir := e.dataDir
	if dataDir == "" { // an env made without newEnv: a directory per process
		dataDir = e.t.TempDir()
	}
	return append(append(os.Environ(),
		"DATABASE_URL="+e.dbURL,
		"ARR_DATA_DIR="+dataDir,
		"ARR_LOG_LEVEL=warn",
		"ARR_DEMO_DATA=false", // tests that want the demo data set it in extraEnv
		// Seeding the index with arr's documents costs every arr up a few
		// hundred events; the tests of the seeded index turn it on.
		"ARR_ANSWER_SEED=off",
	), e.extraEnv...)
}

// arr runs one CLI command to completion and returns stdout, stderr and the
// exit code.
func (e *env) arr(args ...string) (string, string, int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env, cmd.Dir = e.environ(), e.workDir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.t.Fatalf("arr %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}

// mustArr runs a CLI command that must succeed and decodes its --json output.
func (e *env) mustArr(v any, args ...string) {
	e.t.Helper()
	out, errs, code := e.arr(args...)
	if code != 0 {
		e.t.Fatalf("arr %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			e.t.Fatalf("arr %s: decoding %q: %v", strings.Join(args, " "), out, err)
		}
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// proc is a long-running arr process.
type proc struct {
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs `arr <args>` in the background; it is stopped with SIGTERM when
// the test ends.
func (e *env) start(args ...string) *proc {
	e.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env, cmd.Dir = e.environ(), e.workDir
	p := &proc{cmd: cmd, logs: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("starting arr %v: %v", args, err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	e.t.Cleanup(func() { p.stop(e.t) })
	return p
}

func (p *proc) stop(t testing.TB) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("arr did not stop within 30s of SIGTERM; logs:\n%s", p.logs.String())
	}
}

func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// up starts `arr up` on free ports and waits until all three services
// answer /healthz.
func (e *env) up() *proc {
	e.t.Helper()
	a, g, r := freeAddr(e.t), freeAddr(e.t), freeAddr(e.t)
	e.answer, e.gateway, e.records = "http://"+a, "http://"+g, "http://"+r
	e.extraEnv = append(e.extraEnv, "ARR_ANSWER_ADDR="+a, "ARR_GATEWAY_ADDR="+g, "ARR_RECORDS_ADDR="+r)
	p := e.start("up")
	for _, base := range []string{e.answer, e.gateway, e.records} {
		waitHealthy(e.t, base, p)
	}
	return p
}

func waitHealthy(t testing.TB, base string, p *proc) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("arr exited before %s was healthy; logs:\n%s", base, p.logs.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("%s not healthy after 60s; logs:\n%s", base, p.logs.String())
}

type mintedKey struct {
	ID      string `json:"id"`
	Secret  string `json:"secret"`
	Prefix  string `json:"prefix"`
	Service string `json:"service"`
}

func (e *env) createAccount(email, plan string) {
	e.t.Helper()
	e.mustArr(nil, "accounts", "create", "--email", email, "--plan", plan, "--json")
}

func (e *env) mint(email, service string) mintedKey {
	e.t.Helper()
	var k mintedKey
	e.mustArr(&k, "keys", "mint", "--email", email, "--service", service, "--json")
	return k
}

func (e *env) base(service string) string {
	switch service {
	case "answer":
		return e.answer
	case "gateway":
		return e.gateway
	}
	return e.records
}

// get sends a GET with the given headers and returns status and body.
func get(t testing.TB, url string, headers map[string]string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range headers {
		if k == "Host" {
			req.Host = v // net/http sends req.Host, not a Host header
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}
