package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// TestGatewayAnthropicSDK runs scripts/clients/anthropic-node/check.mjs
// (the official @anthropic-ai/sdk; scripts/test.sh installs it) against
// the gateway: a message, a stream, a tool round trip, count_tokens and a
// 400, with the key in x-api-key and a Claude model name.
func TestGatewayAnthropicSDK(t *testing.T) {
	dir, _ := filepath.Abs("../../scripts/clients/anthropic-node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@anthropic-ai", "sdk", "package.json")); err != nil {
		t.Fatalf("the @anthropic-ai/sdk npm package is not installed in %s: run scripts/test.sh (or npm ci there)", dir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: run scripts/test.sh, which installs it")
	}
	g := newGateway(t, "enterprise")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "check.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ARR_BASE_URL="+g.gateway, "ARR_API_KEY="+g.key)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node check.mjs: %v\n%s\n%s", err, out, stderr)
	}
	var rep struct {
		Plain struct {
			Routing struct {
				Tier      string `json:"tier"`
				AuditHash string `json:"audit_hash"`
			} `json:"routing"`
		} `json:"plain"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || len(rep.Problems) != 0 || len(rep.Plain.Routing.AuditHash) != 64 || rep.Plain.Routing.Tier != "mid" {
		t.Fatalf("node report %s: %v", out, err)
	}
	t.Logf("anthropic sdk: %s", out)
}

// claudeCodeEnv is all the environment Claude Code gets: where to find
// the gateway and its key, a home of its own, and the switches that turn
// off everything but the API calls (auto-update, telemetry, error
// reporting, the bug command, cost warnings, the release notes' fetch).
// Without them Claude Code 2.1.332 looks up api.anthropic.com although
// ANTHROPIC_BASE_URL points elsewhere (seen in a loopback-only namespace
// with a logging resolver); CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC alone
// stops that, the others are kept for older and newer releases.
func claudeCodeEnv(home, baseURL, key string) []string {
	return []string{
		"HOME=" + home, "PATH=/usr/bin:/bin", "TERM=dumb",
		"ANTHROPIC_BASE_URL=" + baseURL, "ANTHROPIC_API_KEY=" + key,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1", "DISABLE_COST_WARNINGS=1",
	}
}

// connectRE matches an inet or inet6 connect(2) in strace's output.
var connectRE = regexp.MustCompile(`connect\(\d+, \{sa_family=AF_INET6?, sin6?_port=htons\((\d+)\),.*?(?:inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)")`)

// loopbackOnly starts cmd in a network namespace of its own, where only a
// loopback interface exists: nothing it tries beyond loopback (a DNS
// server included) can connect. The namespace's 127.0.0.1:port is relayed
// to target (the gateway, in the test's namespace), so cmd reaches arr
// and nothing else. It returns the base URL cmd should use; the relay
// stops with the test. Needs root (unshare(CLONE_NEWNET)).
func loopbackOnly(t *testing.T, cmd *exec.Cmd, target string, baseURL func(string)) {
	t.Helper()
	type started struct {
		ln  net.Listener
		err error
	}
	done := make(chan started, 1)
	go func() {
		// This goroutine's thread enters the new namespace and is never
		// unlocked, so the runtime ends the thread with the goroutine: no
		// other goroutine ever runs in the namespace.
		runtime.LockOSThread()
		ln, err := enterLoopbackNamespace()
		if err == nil {
			baseURL("http://" + ln.Addr().String())
			if err = cmd.Start(); err != nil {
				_ = ln.Close()
			}
		}
		done <- started{ln, err}
	}()
	s := <-done
	if s.err != nil {
		t.Fatalf("starting %s in a loopback-only network namespace: %v", cmd.Path, s.err)
	}
	t.Cleanup(func() { _ = s.ln.Close() })
	go func() {
		for {
			c, err := s.ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(up, c); _ = up.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
}

// enterLoopbackNamespace moves the calling thread into a new network
// namespace, brings its loopback interface up and listens on it.
func enterLoopbackNamespace() (net.Listener, error) {
	if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var req struct {
		name  [syscall.IFNAMSIZ]byte
		flags uint16
		_     [22]byte
	}
	copy(req.name[:], "lo")
	req.flags = syscall.IFF_UP | syscall.IFF_LOOPBACK | syscall.IFF_RUNNING
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&req))); errno != 0 {
		return nil, fmt.Errorf("bringing lo up: %w", errno)
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// TestGatewayClaudeCode: Claude Code itself (`claude -p`, the pinned
// @anthropic-ai/claude-code; scripts/test.sh installs it) answers through
// arr from the loopback upstream with nothing set but ANTHROPIC_BASE_URL,
// ANTHROPIC_API_KEY and the switches that turn non-essential traffic off.
// It runs in a network namespace with loopback alone (the gateway relayed
// into it), so it can reach no other host; strace records every connect(2)
// it makes, and the test fails on any address outside loopback (a DNS
// server included): a host Claude Code insists on is reported, not
// reached.
func TestGatewayClaudeCode(t *testing.T) {
	dir, _ := filepath.Abs("../../scripts/clients/claude-code")
	claude := filepath.Join(dir, "node_modules", ".bin", "claude")
	if _, err := os.Stat(claude); err != nil {
		t.Fatalf("Claude Code is not installed in %s: run scripts/test.sh (or npm ci there)", dir)
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Fatal("strace is not installed: run scripts/test.sh, which installs it")
	}
	g := newGateway(t, "enterprise")
	home, work := t.TempDir(), t.TempDir()
	trace := filepath.Join(t.TempDir(), "connects")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, strace, "-f", "-qq", "-e", "trace=connect", "-o", trace,
		claude, "-p", "Say hello to arr", "--output-format", "json")
	cmd.Dir = work
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	loopbackOnly(t, cmd, strings.TrimPrefix(g.gateway, "http://"), func(base string) {
		cmd.Env = claudeCodeEnv(home, base, g.key)
	})
	err = cmd.Wait()
	out := stdout.Bytes()
	connects, _ := os.ReadFile(trace)
	var outside []string
	inside := 0
	for _, m := range connectRE.FindAllStringSubmatch(string(connects), -1) {
		addr := m[2] + m[3]
		if ip := net.ParseIP(addr); ip == nil || !ip.IsLoopback() {
			outside = append(outside, addr+":"+m[1])
		} else {
			inside++
		}
	}
	if len(outside) > 0 {
		t.Errorf("Claude Code tried to connect outside loopback (refused by its network namespace): %v\n%s", outside, connects)
	}
	if err != nil {
		t.Fatalf("claude -p: %v\n%s\n%s", err, out, stderr.Bytes())
	}
	if inside == 0 {
		t.Fatalf("strace saw no connect to the gateway; the trace does not work:\n%s", connects)
	}
	var res struct {
		Type     string `json:"type"`
		IsError  bool   `json:"is_error"`
		Result   string `json:"result"`
		NumTurns int    `json:"num_turns"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.IsError || res.Result == "" {
		t.Fatalf("claude -p output %s: %v", out, err)
	}
	// The upstream's answer is a function of the request: "Hello from
	// <model>: <prompt>", or, as Claude Code offers tools, calls of the
	// first two with {"input": <prompt>} (which Claude Code refuses as
	// invalid input, sending the errors back as tool results) and then
	// "Tool results: …".
	if !strings.Contains(res.Result, "Hello from") && !strings.Contains(res.Result, "Tool results:") {
		t.Fatalf("claude -p did not answer from the loopback upstream: %q", res.Result)
	}
	t.Logf("claude -p (%d connects to loopback): %s", inside, out)
}

// TestGatewayClaudeCodePassThrough: `claude -p` through arr to a Claude
// model of the catalog's anthropic API: its requests reach the Messages
// stand-in as Claude Code sent them (cache_control breakpoints included),
// and the prompt cache they fill and then read (the second turn, with the
// tool results, re-sends the first's prefix) is counted in the rollup.
func TestGatewayClaudeCodePassThrough(t *testing.T) {
	dir, _ := filepath.Abs("../../scripts/clients/claude-code")
	claude := filepath.Join(dir, "node_modules", ".bin", "claude")
	if _, err := os.Stat(claude); err != nil {
		t.Fatalf("Claude Code is not installed in %s: run scripts/test.sh (or npm ci there)", dir)
	}
	g := newPassGateway(t, "claude-*haiku*", "claude-*opus*")
	home, work := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "Say hello to arr", "--output-format", "json")
	cmd.Dir = work
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	loopbackOnly(t, cmd, strings.TrimPrefix(g.gateway, "http://"), func(base string) {
		cmd.Env = claudeCodeEnv(home, base, g.key)
	})
	if err := cmd.Wait(); err != nil {
		t.Fatalf("claude -p: %v\n%s\n%s", err, stdout.Bytes(), stderr.Bytes())
	}
	var res struct {
		IsError bool   `json:"is_error"`
		Result  string `json:"result"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.IsError || res.Result == "" {
		t.Fatalf("claude -p output %s: %v", stdout.Bytes(), err)
	}
	body := g.up.LastBody("claude-sonnet-4-0")
	if !bytes.Contains(body, []byte(`"cache_control"`)) || g.up.Calls("claude-sonnet-4-0") == 0 || g.up.Calls("gpt-4.1") != 0 {
		t.Fatalf("Claude Code's requests did not reach the Claude model as sent (%d calls, %d to the chat model): %.2000s",
			g.up.Calls("claude-sonnet-4-0"), g.up.Calls("gpt-4.1"), body)
	}
	eventually(t, 5*time.Second, "GET /v1/usage counts the prompt cache Claude Code used", func() bool {
		_, b := get(t, g.gateway+"/v1/usage?days=1", map[string]string{"Authorization": "Bearer " + g.key})
		var r struct {
			Total struct {
				CacheRead  int64 `json:"cache_read_tokens"`
				CacheWrite int64 `json:"cache_write_tokens"`
			} `json:"total"`
		}
		_ = json.Unmarshal(b, &r)
		// The second turn (the tool results) re-sends the first's prefix:
		// read from the cache.
		return r.Total.CacheWrite > 0 && r.Total.CacheRead > 0
	})
	t.Logf("claude -p through the pass-through (%d calls, %d cache_control in the last): %s", g.up.Calls("claude-sonnet-4-0"),
		bytes.Count(body, []byte(`"cache_control"`)), res.Result)
}
