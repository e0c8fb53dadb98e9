package gemini_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/gemini"
	"github.com/arr-dev/arr/domain/chat"
)

var update = flag.Bool("update", false, "rewrite the golden .out.json files")

// golden runs translate on each testdata/dir/*.in.json and compares its
// output with the .out.json beside it (indented JSON).
func golden(t *testing.T, dir string, translate func(t *testing.T, in []byte) any) {
	t.Helper()
	ins, err := filepath.Glob(filepath.Join("testdata", dir, "*.in.json"))
	if err != nil || len(ins) == 0 {
		t.Fatalf("no golden inputs in testdata/%s (%v)", dir, err)
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got := indent(t, translate(t, data))
			out := strings.TrimSuffix(in, ".in.json") + ".out.json"
			if *update {
				if err := os.WriteFile(out, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s:\ngot  %s\nwant %s", name, got, want)
			}
		})
	}
}

// indent is v (raw JSON bytes or a value) as indented JSON.
func indent(t *testing.T, v any) []byte {
	t.Helper()
	raw, ok := v.([]byte)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatalf("not JSON: %s (%v)", raw, err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// TestRequestGolden: a chat request (as a client sends it) in, the
// Gemini generateContent body out.
func TestRequestGolden(t *testing.T) {
	golden(t, "request", func(t *testing.T, in []byte) any {
		var r chat.Request
		if err := json.Unmarshal(in, &r); err != nil {
			t.Fatal(err)
		}
		out, err := gemini.Request(&r)
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
}

// TestReplyGolden: a Gemini reply in, the chat completion body out.
func TestReplyGolden(t *testing.T) {
	golden(t, "reply", func(t *testing.T, in []byte) any {
		out, err := gemini.CompletionBody(in, "gemini-test", 1700000000)
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
}

// TestStreamGolden: a Gemini stream's events in (a JSON array of event
// data), the chat chunk bodies out.
func TestStreamGolden(t *testing.T) {
	golden(t, "stream", func(t *testing.T, in []byte) any {
		var events []json.RawMessage
		if err := json.Unmarshal(in, &events); err != nil {
			t.Fatal(err)
		}
		s := gemini.NewStream("gemini-test", 1700000000)
		chunks := []json.RawMessage{}
		for _, ev := range events {
			out, err := s.Event(ev)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range out {
				chunks = append(chunks, c)
			}
		}
		if !s.Done() {
			t.Error("the stream is not done after its finishing event")
		}
		return chunks
	})
}
