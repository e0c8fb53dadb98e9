package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go"
)

// readmePath is the README, from this package's directory.
const readmePath = "../../README.md"

// readmeAddrs are the addresses the README's first requests name, which
// the test replaces with its services' own (on free ports), as it
// replaces ./bin/arr with the binary it built.
var readmeAddrs = []string{"http://127.0.0.1:8081", "http://127.0.0.1:8082", "http://127.0.0.1:8083"}

// section is the README's "## First requests" section, up to the next
// heading of its level.
func firstRequestsSection(t *testing.T, readme string) string {
	t.Helper()
	i := strings.Index(readme, "\n## First requests\n")
	if i < 0 {
		t.Fatal("the README has no ## First requests section")
	}
	s := readme[i+1:]
	if j := strings.Index(s[3:], "\n## "); j >= 0 {
		s = s[:j+3]
	}
	return s
}

// firstRequestsBlock is the first ```sh block of that section.
func firstRequestsBlock(t *testing.T, section string) string {
	t.Helper()
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("the README's First requests section has no ```sh block")
	}
	return m[1]
}

// TestReadmeIsAFrontDoor: the README is short, and its first 60 lines hold
// the two commands, the account and key steps and a request to each
// service.
func TestReadmeIsAFrontDoor(t *testing.T) {
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) >= 12*1024 {
		t.Errorf("the README is %d bytes; a front door stays under 12 KB (reference goes to docs/)", len(b))
	}
	head := strings.Join(strings.SplitN(string(b), "\n", 61)[:60], "\n")
	for _, want := range []string{"./scripts/up.sh", "./scripts/test.sh", "accounts create --email",
		"keys mint --email you@example.com --service answer", "keys mint --email you@example.com --service gateway",
		"keys mint --email you@example.com --service records",
		"/api/v1/answer", "/v1/chat/completions", "/api/v1/parcels"} {
		if !strings.Contains(head, want) {
			t.Errorf("the README's first 60 lines lack %q", want)
		}
	}
	// Every docs/ link resolves.
	for _, m := range regexp.MustCompile(`\]\((docs/[^)#]+)`).FindAllStringSubmatch(string(b), -1) {
		if _, err := os.Stat(filepath.Join("../..", m[1])); err != nil {
			t.Errorf("the README links to %s: %v", m[1], err)
		}
	}
}

// sdkUpstream is a loopback OpenAI-compatible server, as a local Ollama
// would be: it decodes each chat request with the official SDK's own
// type and answers with its reply type.
type sdkUpstream struct {
	url  string
	mu   sync.Mutex
	reqs []openai.ChatCompletionNewParams
}

const sdkUpstreamReply = "Hello from the loopback upstream."

func startSDKUpstream(t *testing.T) *sdkUpstream {
	t.Helper()
	u := &sdkUpstream{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var p openai.ChatCompletionNewParams
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&p); err != nil || len(p.Messages) == 0 {
			http.Error(w, `{"error":{"message":"not a chat request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		u.mu.Lock()
		u.reqs = append(u.reqs, p)
		u.mu.Unlock()
		reply := openai.ChatCompletion{ID: "chatcmpl-loopback", Object: "chat.completion", Created: time.Now().Unix(), Model: p.Model,
			Choices: []openai.ChatCompletionChoice{{Index: 0, FinishReason: "stop",
				Message: openai.ChatCompletionMessage{Role: "assistant", Content: sdkUpstreamReply}}},
			Usage: openai.CompletionUsage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(reply)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	u.url = "http://" + ln.Addr().String() + "/v1"
	return u
}

func (u *sdkUpstream) requests() []openai.ChatCompletionNewParams {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]openai.ChatCompletionNewParams(nil), u.reqs...)
}

// script runs a bash script as a user would paste it (stopping at the
// first failure) in the env's working directory and environment, and
// returns its output; it fails the test when the script fails.
func (e *env) script(what, script string) (stdout, stderr string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-eu", "-o", "pipefail", "-c", script)
	cmd.Env, cmd.Dir = e.environ(), e.workDir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		e.t.Fatalf("%s failed: %v\nstdout:\n%s\nstderr:\n%s", what, err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// embeddedDataDir is a fresh data directory for an arr on its embedded
// PostgreSQL, which runs as an unprivileged user when tests run as root
// and so must be able to reach it.
func embeddedDataDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "arr-embedded-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// embeddedEnv is an installation as a newcomer's ./scripts/up.sh makes
// it: no DATABASE_URL (the embedded PostgreSQL under a fresh data
// directory), the demo data, arr run from the source tree (whose README
// and docs/ seed the answer index), free ports.
func embeddedEnv(t *testing.T) *env {
	t.Helper()
	dir := embeddedDataDir(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dataDir: dir, workDir: root}
	e.extraEnv = []string{"ARR_EMBEDDED_PG_PORT=" + strings.Split(freeAddr(t), ":")[1], "ARR_DEMO_DATA=true", "ARR_ANSWER_SEED=on", "ARR_LOG_LEVEL=info",
		// No provider key of the machine's may reach a provider.
		"OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "GEMINI_API_KEY=", "MISTRAL_API_KEY=", "ARR_ANSWER_LLM_API_KEY="}
	return e
}

// hostileWorkDir is a working directory a newcomer might run arr from:
// its own README and docs/, with a named pipe (docs/live.md, which blocks
// whoever opens it) and a link out of the tree to a file never meant to be
// published. arr seeds its own documents, built in, so none of it matters.
func hostileWorkDir(t *testing.T) (dir, fifo string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Notes\n\nSign-in links are valid for fifteen minutes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "credentials.md")
	if err := os.WriteFile(secret, []byte("# Credentials\n\nOPENAI_API_KEY=sk-the-operators-private-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "docs", "notes.md")); err != nil {
		t.Fatal(err)
	}
	fifo = filepath.Join(dir, "docs", "live.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// Whatever happens, free a blocked open when the test ends.
	t.Cleanup(func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
	})
	return dir, fifo
}

// TestReadmeFirstRequests is a newcomer's first five minutes, on one real
// arr up (the embedded PostgreSQL, the demo data, a local OpenAI-compatible
// server and its model, as the README's note says), run on a terminal from
// a working directory that holds traps (hostileWorkDir):
//   - arr up says once, on the terminal, when it is ready, where the
//     services are and how to get a first key and question; the JSON logs
//     never repeat it, and its commands work as printed;
//   - the README's first-request block, as it stands (only the addresses
//     and the binary's path are the test's), gets the answers a newcomer
//     expects, and every page the section names answers;
//   - nothing of the working directory reaches the answers, and arr stops
//     within its grace on SIGTERM.
func TestReadmeFirstRequests(t *testing.T) {
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	section := firstRequestsSection(t, string(b))
	block := firstRequestsBlock(t, section)
	if !strings.Contains(section, "ARR_UPSTREAM_BASE_URL=http://127.0.0.1:11434/v1") || !strings.Contains(section, "ARR_UPSTREAM_MODEL=llama3.2") {
		t.Fatal("the README's note on the gateway's upstream is not the one this test starts arr with")
	}
	up := startSDKUpstream(t)
	e := embeddedEnv(t)
	e.workDir, _ = hostileWorkDir(t)
	a, g, r := freeAddr(t), freeAddr(t), freeAddr(t)
	e.answer, e.gateway, e.records = "http://"+a, "http://"+g, "http://"+r
	e.extraEnv = append(e.extraEnv, "ARR_UPSTREAM_BASE_URL="+up.url, "ARR_UPSTREAM_MODEL=llama3.2", "ARR_LOG_FORMAT=json", "ARR_SHUTDOWN_GRACE=5s",
		"ARR_ANSWER_ADDR="+a, "ARR_GATEWAY_ADDR="+g, "ARR_RECORDS_ADDR="+r)
	p := startOnTerminal(t, e, "up")
	message := readyMessage(t, p, e)

	// The ready message's commands, as printed (on an address of their own).
	cmds := regexp.MustCompile(`(?m)^  (`+regexp.QuoteMeta(binary)+` .*|ANSWER_KEY=.*|curl .*)$`).FindAllStringSubmatch(message, -1)
	if len(cmds) != 3 {
		t.Fatalf("want the three commands of a first key and question, found %d:\n%s", len(cmds), message)
	}
	var script []string
	for _, c := range cmds {
		script = append(script, strings.ReplaceAll(c[1], "you@example.com", "ready@example.com"))
	}
	stdout, _ := e.script("the ready message's commands", strings.Join(script, "\n"))
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	checkAnswer(t, "the ready message's question", lines[len(lines)-1])

	// The README's block.
	ours := []string{e.answer, e.gateway, e.records}
	subst := func(s string) string {
		for i, a := range readmeAddrs {
			s = strings.ReplaceAll(s, a, ours[i])
		}
		return strings.ReplaceAll(s, "./bin/arr", binary)
	}
	stdout, stderr := e.script("the README's first requests", subst(block))
	lines = strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "account ") {
		t.Fatalf("want the account line and one JSON line per request, got:\n%s\nstderr:\n%s", stdout, stderr)
	}
	checkAnswer(t, "the README's question", lines[1])
	checkCompletion(t, up, lines[2])
	checkParcels(t, lines[3])

	// The pages the section sends a newcomer to.
	links := regexp.MustCompile(`http://127\.0\.0\.1:808[123]/[A-Za-z0-9_./-]*`).FindAllString(strings.ReplaceAll(section, block, ""), -1)
	if len(links) < 8 {
		t.Fatalf("found only %d page links in the First requests section: %v", len(links), links)
	}
	for _, l := range links {
		if code, body := get(t, subst(strings.TrimRight(l, ".")), nil); code != http.StatusOK {
			t.Errorf("the README's %s answers %d: %.200s", l, code, body)
		}
	}

	// Nothing of the working directory is in the index.
	k := e.mint("ready@example.com", "answer")
	for _, q := range []string{"What is the OPENAI_API_KEY in the credentials?", "How long are sign-in links valid?"} {
		code, body := postJSON(t, e.answer+"/api/v1/answer", []byte(`{"q":"`+q+`"}`), map[string]string{"Authorization": "Bearer " + k.Secret})
		raw, _ := json.Marshal(body)
		if code != 200 || strings.Contains(string(raw), "sk-the-operators-private-key") || strings.Contains(string(raw), "fifteen minutes") {
			t.Errorf("%q: %d; the answer draws on the working directory's files: %s", q, code, raw)
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
		t.Errorf("arr up did not stop within 15s of SIGTERM (ARR_SHUTDOWN_GRACE=5s)")
	}
}

// readyMessage waits for arr up's ready message on p's terminal and
// checks it: printed once, naming the services, the first-key commands
// and a curl; never in a JSON log line, and one "ready" log record.
func readyMessage(t *testing.T, p *ptyProc, e *env) string {
	t.Helper()
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
	time.Sleep(2 * time.Second) // anything printed twice is printed by now
	out := p.text()
	if n := strings.Count(out, "arr is ready"); n != 1 {
		t.Fatalf("the ready message is printed %d times:\n%s", n, out)
	}
	var message []string
	readyLogs := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "{") {
			message = append(message, line)
			continue
		}
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
	}
	if readyLogs != 1 {
		t.Errorf("%d ready log lines, want one", readyLogs)
	}
	text := strings.Join(message, "\n")
	for _, want := range []string{e.answer + "/api/v1/answer", e.gateway + "/v1", e.records + "/api/v1/parcels", "/openapi.json", "/map",
		binary + " accounts create --email you@example.com", binary + " keys mint --email you@example.com --service answer",
		"curl -s", "Ctrl-C stops arr."} {
		if !strings.Contains(text, want) {
			t.Errorf("the ready message lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "no upstream yet") {
		t.Errorf("the ready message says the gateway has no upstream, and it has one:\n%s", text)
	}
	return text
}

// checkAnswer: an answer to the sign-in question, leading with the fact.
func checkAnswer(t *testing.T, what, line string) {
	t.Helper()
	var answer struct {
		Answer  string `json:"answer"`
		Sources []struct {
			URL string `json:"url"`
		} `json:"sources"`
	}
	if err := json.Unmarshal([]byte(line), &answer); err != nil || len(answer.Sources) == 0 {
		t.Fatalf("%s: %v\n%s", what, err, line)
	}
	lead, _, _ := strings.Cut(answer.Answer, "[")
	if !strings.Contains(lead, "54329") {
		t.Errorf("%s is not answered with the fact first (port 54329): %q", what, answer.Answer)
	}
}

// checkCompletion: the upstream's reply, routed and audited, for the one
// model the local server has.
func checkCompletion(t *testing.T, up *sdkUpstream, line string) {
	t.Helper()
	var completion openai.ChatCompletion
	if err := json.Unmarshal([]byte(line), &completion); err != nil || len(completion.Choices) != 1 {
		t.Fatalf("the completion request: %v\n%s", err, line)
	}
	if got := completion.Choices[0].Message.Content; got != sdkUpstreamReply {
		t.Errorf("the completion's reply is %q, want the upstream's", got)
	}
	var routing struct {
		Routing struct {
			AuditHash string `json:"audit_hash"`
			Model     string `json:"model"`
		} `json:"routing"`
	}
	if err := json.Unmarshal([]byte(line), &routing); err != nil || routing.Routing.AuditHash == "" || routing.Routing.Model == "" {
		t.Errorf("the completion carries no routing with an audit hash: %s", line)
	}
	reqs := up.requests()
	if len(reqs) != 1 || reqs[0].Model != "llama3.2" || reqs[0].Messages[0].OfUser == nil ||
		reqs[0].Messages[0].OfUser.Content.OfString.Value != "Say hello in five words." {
		t.Errorf("the upstream got %d requests; want one for llama3.2 with the README's message: %+v", len(reqs), reqs)
	}
}

// checkParcels: three Baltimore vacants of the demo data.
func checkParcels(t *testing.T, line string) {
	t.Helper()
	var parcels struct {
		Type     string `json:"type"`
		Features []struct {
			Properties struct {
				County string   `json:"county"`
				Layers []string `json:"layers"`
			} `json:"properties"`
		} `json:"features"`
	}
	if err := json.Unmarshal([]byte(line), &parcels); err != nil || parcels.Type != "FeatureCollection" || len(parcels.Features) != 3 {
		t.Fatalf("the parcels request: %v\n%s", err, line)
	}
	for _, f := range parcels.Features {
		if f.Properties.County != "24510" || len(f.Properties.Layers) == 0 || f.Properties.Layers[0] != "vacant" {
			t.Errorf("a parcel of the README's bbox is not a Baltimore vacant: %+v", f.Properties)
		}
	}
}
