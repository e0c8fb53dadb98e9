package anthropic_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/anthropic"
	"github.com/arr-dev/arr/domain"
)

// FuzzRequest: the request translator never panics, fails with a
// domain.ErrInvalid only, and what it writes is a JSON object with a
// model, a max_tokens of at least 1 and messages.
func FuzzRequest(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "request", "*.chat.json"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`{}`, `null`, `{"model":"m","messages":[{"role":"tool","content":[]}]}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"a","content":[{"type":"text","text":"x"}]}]}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,"}}]}],"reasoning_effort":"high","max_tokens":2048}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		tr, err := anthropic.Request(body, anthropic.Options{MaxTokens: 4096})
		if err != nil {
			if !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		var out struct {
			Model     string            `json:"model"`
			MaxTokens int64             `json:"max_tokens"`
			Messages  []json.RawMessage `json:"messages"`
			Thinking  *struct {
				Budget int64 `json:"budget_tokens"`
			} `json:"thinking"`
		}
		if err := json.Unmarshal(tr.Body, &out); err != nil || out.Model == "" || out.MaxTokens < 1 || out.MaxTokens > 4096 || out.Messages == nil {
			t.Fatalf("%s: %v", tr.Body, err)
		}
		if out.Thinking != nil && (out.Thinking.Budget < 1024 || out.Thinking.Budget >= out.MaxTokens) {
			t.Fatalf("thinking budget %d with max_tokens %d", out.Thinking.Budget, out.MaxTokens)
		}
	})
}

// FuzzStream: the stream translator never panics on any event, and
// every chunk it writes is JSON.
func FuzzStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "stream", "*.sse"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, sse []byte) {
		s := anthropic.NewStream(anthropic.StreamOptions{IncludeUsage: true})
		for _, ev := range readSSE(t, sse) {
			chunks, err := s.Event(ev.name, ev.data)
			for _, c := range chunks {
				if !json.Valid(c) {
					t.Fatalf("chunk %s", c)
				}
			}
			if err != nil {
				return
			}
		}
	})
}
