package anthropic_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/anthropic"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

// goldenOptions are the model settings of every golden request.
var goldenOptions = anthropic.Options{MaxTokens: 8192}

// goldenCreated is the created time of every golden reply and chunk.
const goldenCreated = 1765000000

// golden compares got (JSON, indented before comparing) with the file
// path, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

func inputs(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs %s: %v", pattern, err)
	}
	return files
}

// TestGoldenRequests: each testdata/request/NAME.chat.json translates to
// NAME.messages.json.
func TestGoldenRequests(t *testing.T) {
	for _, in := range inputs(t, "request/*.chat.json") {
		name := strings.TrimSuffix(in, ".chat.json")
		t.Run(filepath.Base(name), func(t *testing.T) {
			body, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := anthropic.Request(body, goldenOptions)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name+".messages.json", indent(t, tr.Body))
		})
	}
}

// TestGoldenReplies: each testdata/reply/NAME.messages.json translates
// to NAME.chat.json.
func TestGoldenReplies(t *testing.T) {
	for _, in := range inputs(t, "reply/*.messages.json") {
		name := strings.TrimSuffix(in, ".messages.json")
		t.Run(filepath.Base(name), func(t *testing.T) {
			body, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			r, err := anthropic.Reply(body, goldenCreated)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name+".chat.json", indent(t, r.Body))
		})
	}
}

// sseEvent is one server-sent event of a golden stream.
type sseEvent struct {
	name string
	data []byte
}

// readSSE reads a stream's events (event: and data: lines, blank lines
// between).
func readSSE(t testing.TB, b []byte) []sseEvent {
	t.Helper()
	var evs []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != nil {
				evs = append(evs, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event:"):
			cur.name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			cur.data = append(cur.data, strings.TrimSpace(strings.TrimPrefix(line, "data:"))...)
		}
	}
	if cur.data != nil {
		evs = append(evs, cur)
	}
	return evs
}

// translateStream feeds evs to a Stream: the chunks, one a line, then
// "error: " and the *Error's status and body if the stream failed.
func translateStream(t testing.TB, evs []sseEvent, includeUsage bool) ([]byte, *anthropic.Stream) {
	t.Helper()
	s := anthropic.NewStream(anthropic.StreamOptions{Created: goldenCreated, IncludeUsage: includeUsage})
	var out bytes.Buffer
	for _, ev := range evs {
		chunks, err := s.Event(ev.name, ev.data)
		for _, c := range chunks {
			out.Write(c)
			out.WriteByte('\n')
		}
		var ae *anthropic.Error
		if errors.As(err, &ae) {
			fmt.Fprintf(&out, "error: %d %s\n", ae.Status, ae.Body)
			break
		}
		if err != nil {
			t.Fatalf("event %s %s: %v", ev.name, ev.data, err)
		}
	}
	return out.Bytes(), s
}

// TestGoldenStreams: each testdata/stream/NAME.sse translates to
// NAME.chunks (with include_usage).
func TestGoldenStreams(t *testing.T) {
	for _, in := range inputs(t, "stream/*.sse") {
		name := strings.TrimSuffix(in, ".sse")
		t.Run(filepath.Base(name), func(t *testing.T) {
			body, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := translateStream(t, readSSE(t, body), true)
			golden(t, name+".chunks", got)
		})
	}
}
