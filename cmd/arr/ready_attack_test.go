package main

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadyMessageCurlIsShellSafe: the ready message's curl is for
// copying into a shell as it stands, and its URL comes from
// ARR_PUBLIC_BASE_URL, which arr accepts with shell metacharacters in its
// path ($, (, ), ;, &, ' all survive url.Parse and EscapedPath). The
// remedies quote every value they echo (shellWord); the ready message
// prints the base URL bare, so a base path with an apostrophe breaks the
// pasted line and one with $(...) runs a command in the operator's shell.
// Pasted into sh, the line must pass the URL through as one word and run
// nothing else.
func TestReadyMessageCurlIsShellSafe(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh to paste the ready message into: %v", err)
	}
	for _, tc := range []struct {
		name string
		path string // after http://127.0.0.1:8081, with MARKER for a file
	}{
		{name: "command substitution", path: "/$(touch$IFS" + "MARKER)"},
		{name: "command separator", path: "/a;touch$IFS" + "MARKER;b"},
		{name: "apostrophe", path: "/it's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "pwned")
			base := "http://127.0.0.1:8081" + strings.ReplaceAll(tc.path, "MARKER", marker)
			cfg, err := configFrom(map[string]string{"ARR_PUBLIC_BASE_URL": base})
			if err != nil {
				t.Fatalf("arr refuses ARR_PUBLIC_BASE_URL=%s, so nothing to show: %v", base, err)
			}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			bases := map[string]string{}
			for _, svc := range []string{"answer", "gateway", "records"} {
				site, err := cfg.site(svc, "127.0.0.1:8081", log)
				if err != nil {
					t.Fatalf("arr refuses ARR_PUBLIC_BASE_URL=%s, so nothing to show: %v", base, err)
				}
				bases[svc] = site.BaseURL()
			}
			msg := readiness{bases: bases, self: "arr", upstream: true}.message()
			var curl string
			for _, line := range strings.Split(msg, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "curl ") {
					curl = strings.TrimSpace(line)
				}
			}
			if curl == "" {
				t.Fatalf("no curl line in the ready message:\n%s", msg)
			}
			// The pasted line, with curl a function that prints its
			// arguments one per line instead of sending anything.
			script := "curl() { for a in \"$@\"; do printf '%s\\n' \"$a\"; done; }\n" + curl + "\n"
			out, err := exec.Command(sh, "-c", script).CombinedOutput()
			if _, statErr := os.Stat(marker); statErr == nil {
				t.Fatalf("pasting the ready message's curl line ran a command (it made %s):\n%s", marker, curl)
			}
			want := bases["answer"] + "/api/v1/answer"
			args := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			if err != nil || !slices.Contains(args, want) {
				t.Fatalf("pasted into sh, the ready message's curl line does not pass %q as one argument (err %v); sh printed:\n%s\nthe line:\n%s", want, err, out, curl)
			}
		})
	}
}
