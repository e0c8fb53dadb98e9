package anthropic_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/anthropic"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/chat"
)

// TestStandIn sends each golden request's translation to the Messages
// stand-in (which decodes it with anthropic-sdk-go's types and refuses a
// field they do not have, as the API does) and translates its answer
// back: a chat completion, or a stream of chunks ending in the usage
// chunk.
func TestStandIn(t *testing.T) {
	srv := upstreamtest.Start(t)
	files, err := filepath.Glob(filepath.Join("testdata", "request", "*.chat.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden requests: %v", err)
	}
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			body, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := anthropic.Request(body, goldenOptions)
			if err != nil {
				t.Fatal(err)
			}
			status, answer := post(t, srv.URL+"/messages", tr.Body)
			if status != http.StatusOK {
				t.Fatalf("the stand-in refused %s: %d %s", tr.Body, status, answer)
			}
			if !tr.Stream {
				r, err := anthropic.Reply(answer, 1)
				if err != nil {
					t.Fatalf("Reply(%s): %v", answer, err)
				}
				if _, ch, err := chat.ReadCompletion(r.Body); err != nil || ch.FinishReason == "" || r.Tokens.Prompt == 0 {
					t.Fatalf("%s: %v", r.Body, err)
				}
				return
			}
			out, s := translateStream(t, readSSE(t, answer), tr.IncludeUsage)
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if !s.Done() || s.Tokens().Prompt == 0 || !strings.Contains(lines[len(lines)-1], `"usage"`) {
				t.Fatalf("stream %s → %s", answer, out)
			}
		})
	}
}

// post sends a Messages request to the stand-in with the headers the
// API requires.
func post(t *testing.T, url string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "test-key")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}
