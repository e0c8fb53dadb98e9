package main_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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

// TestGatewayClaudeCode: Claude Code itself (`claude -p`, the pinned
// @anthropic-ai/claude-code; scripts/test.sh installs it) answers through
// arr from the loopback upstream with nothing set but ANTHROPIC_BASE_URL,
// ANTHROPIC_API_KEY and the switches that turn non-essential traffic off.
// strace records every connect(2) it makes: the test fails on any address
// outside loopback (a DNS server included), so Claude Code reaching for
// another host is seen, not let through quietly.
func TestGatewayClaudeCode(t *testing.T) {
	dir, _ := filepath.Abs("../../scripts/clients/claude-code")
	claude := filepath.Join(dir, "node_modules", ".bin", "claude")
	if _, err := os.Stat(claude); err != nil {
		t.Fatalf("Claude Code is not installed in %s: run scripts/test.sh (or npm install there)", dir)
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
	cmd.Env = claudeCodeEnv(home, g.gateway, g.key)
	out, err := cmd.Output()
	connects, _ := os.ReadFile(trace)
	var outside []string
	for _, m := range connectRE.FindAllStringSubmatch(string(connects), -1) {
		addr := m[2] + m[3]
		if ip := net.ParseIP(addr); ip == nil || !ip.IsLoopback() {
			outside = append(outside, addr+":"+m[1])
		}
	}
	if len(outside) > 0 {
		t.Errorf("Claude Code connected outside loopback: %v\n%s", outside, connects)
	}
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("claude -p: %v\n%s\n%s", err, out, stderr)
	}
	var res struct {
		Type    string `json:"type"`
		IsError bool   `json:"is_error"`
		Result  string `json:"result"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.IsError || res.Result == "" {
		t.Fatalf("claude -p output %s: %v", out, err)
	}
	// The upstream's answer is a function of the request: "Hello from
	// <model>: <prompt>", or for a request that offers tools a call of
	// them and then "Tool results: …" once Claude Code sends their results.
	if !strings.Contains(res.Result, "Hello from") && !strings.Contains(res.Result, "Tool results:") {
		t.Fatalf("claude -p did not answer from the loopback upstream: %q", res.Result)
	}
	t.Logf("claude -p: %s", out)
}
