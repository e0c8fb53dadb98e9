package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// prompts are the session's turns, short as a developer's follow-ups
// are; past the last they repeat.
var prompts = []string{
	"Say hello to arr",
	"What does a gateway do?",
	"Name one reason to cache a prompt.",
	"And one reason not to?",
	"Summarise this conversation in a sentence.",
	"Thank you. One more word?",
	"Is that all?",
	"Goodbye.",
}

// turn is one `claude -p` of the session and the window in which its
// calls reached arr.
type turn struct {
	N        int       `json:"n"`
	Prompt   string    `json:"prompt"`
	Began    time.Time `json:"began"`
	Ended    time.Time `json:"ended"`
	Result   string    `json:"result"`
	NumTurns int       `json:"num_turns"`
}

// claudeCodeEnv is all the environment Claude Code gets, as in cmd/arr's
// TestGatewayClaudeCode: the gateway and its key, a home of its own, and
// the switches that turn off everything but the API calls.
func claudeCodeEnv(home, baseURL, key string) []string {
	return []string{
		"HOME=" + home, "PATH=/usr/bin:/bin", "TERM=dumb",
		"ANTHROPIC_BASE_URL=" + baseURL, "ANTHROPIC_API_KEY=" + key,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1", "DISABLE_COST_WARNINGS=1",
	}
}

// runSession runs the turns one after the other in one working directory
// and home, so --continue resumes the conversation of the turn before.
func runSession(ctx context.Context, ns *loopbackNS, claude, key, tmp string, turns int, calls func() int) ([]turn, error) {
	home, work := filepath.Join(tmp, "home"), filepath.Join(tmp, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	var out []turn
	for i := range turns {
		t, err := runTurn(ctx, ns, claude, claudeCodeEnv(home, ns.baseURL, key), work, i)
		if err != nil {
			return nil, fmt.Errorf("%w\n(%d calls reached the stand-in so far)", err, calls())
		}
		log.Printf("turn %d (%.1fs, %d model turns, %d upstream calls so far): %.120q", t.N, t.Ended.Sub(t.Began).Seconds(), t.NumTurns, calls(), t.Result)
		out = append(out, t)
	}
	return out, nil
}

func runTurn(ctx context.Context, ns *loopbackNS, claude string, env []string, work string, i int) (turn, error) {
	t := turn{N: i + 1, Prompt: prompts[i%len(prompts)]}
	args := []string{"-p", t.Prompt, "--output-format", "json"}
	if i > 0 {
		args = append(args, "--continue")
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, args...)
	cmd.Dir, cmd.Env = work, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t.Began = time.Now().UTC()
	err := ns.start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	t.Ended = time.Now().UTC()
	if err != nil {
		return t, fmt.Errorf("turn %d, claude %v: %w\n%s\n%s", t.N, args, err, stdout.Bytes(), stderr.Bytes())
	}
	var res struct {
		IsError  bool   `json:"is_error"`
		Result   string `json:"result"`
		NumTurns int    `json:"num_turns"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.IsError {
		return t, fmt.Errorf("turn %d: claude printed %s: %v", t.N, stdout.Bytes(), err)
	}
	t.Result, t.NumTurns = res.Result, res.NumTurns
	return t, nil
}
