package gemini_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/gemini"
	"github.com/arr-dev/arr/domain/chat"
)

// seeds adds the golden inputs of testdata/dir to f.
func seeds(f *testing.F, dir string) {
	ins, _ := filepath.Glob(filepath.Join("testdata", dir, "*.in.json"))
	for _, in := range ins {
		b, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzReply: any upstream reply translates to valid JSON or fails; any
// stream event to valid chunks or fails; never a panic.
func FuzzReply(f *testing.F) {
	seeds(f, "reply")
	f.Fuzz(func(t *testing.T, b []byte) {
		if out, err := gemini.CompletionBody(b, "m", 1); err == nil && !json.Valid(out) {
			t.Fatalf("invalid JSON %s", out)
		}
		s := gemini.NewStream("", 1)
		for range 2 {
			chunks, err := s.Event(b)
			if err != nil {
				return
			}
			for _, c := range chunks {
				if !json.Valid(c) {
					t.Fatalf("invalid chunk %s", c)
				}
			}
		}
	})
}

// FuzzRequest: any chat request translates to valid JSON or is refused.
func FuzzRequest(f *testing.F) {
	seeds(f, "request")
	f.Fuzz(func(t *testing.T, b []byte) {
		var r chat.Request
		if json.Unmarshal(b, &r) != nil {
			return
		}
		if out, err := gemini.Request(&r); err == nil && !json.Valid(out) {
			t.Fatalf("invalid JSON %s", out)
		}
	})
}
