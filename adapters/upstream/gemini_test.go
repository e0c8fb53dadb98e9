package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/translate/gemini"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/routing"
)

// geminiClient is a client whose key variable GK is "gk-test" and whose
// variable SA names the file sa (a service account's JSON).
func geminiClient(t testing.TB, breakerFailures uint32, sa string) *upstream.Client {
	t.Helper()
	c, err := upstream.New(upstream.Config{Timeout: 5 * time.Second, StreamIdleTimeout: 5 * time.Second,
		BreakerFailures: breakerFailures, BreakerOpenFor: time.Minute,
		APIKey: func(env string) string {
			switch env {
			case "GK":
				return "gk-test"
			case "SA":
				return sa
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func geminiModel(srv *upstreamtest.Server, id string) routing.Model {
	return routing.Model{ID: id, Vendor: "google", UpstreamModel: id, BaseURL: srv.GeminiURL(), APIKeyEnv: "GK"}
}

// vertexModel is a Vertex AI model whose credentials are a service
// account of srv, written to a file SA names.
func vertexModel(t testing.TB, srv *upstreamtest.Server, id string) (routing.Model, string) {
	t.Helper()
	sa, err := srv.ServiceAccount("arr-" + id)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(path, sa, 0o600); err != nil {
		t.Fatal(err)
	}
	return routing.Model{ID: id, Vendor: "google", UpstreamModel: id, BaseURL: srv.URL, Project: "arr-test", Location: "us-central1", CredentialsEnv: "SA"}, path
}

// geminiBody is a chat request as the Gemini body sent.
func geminiBody(t testing.TB, r *chat.Request) []byte {
	t.Helper()
	b, err := gemini.Request(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func userMessage(parts ...chat.Part) []chat.Message {
	return []chat.Message{{Role: "user", Content: parts}}
}

// reply is a non-streamed Do's reply as a chat completion.
func reply(t testing.TB, c *upstream.Client, m routing.Model, api upstream.API, r *chat.Request) chat.Completion {
	t.Helper()
	resp, err := c.Do(context.Background(), m, upstream.Request{API: api, Body: geminiBody(t, r)})
	if err != nil {
		t.Fatal(err)
	}
	body, err := gemini.CompletionBody(resp.Data, m.ID, 1)
	if err != nil {
		t.Fatalf("%v: %s", err, resp.Data)
	}
	comp, _, err := chat.ReadCompletion(body)
	if err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return comp
}

// streamed is a streamed Do's chunks, read to the stream's end and
// translated, with its content assembled.
func streamed(t testing.TB, c *upstream.Client, m routing.Model, api upstream.API, r *chat.Request) (string, []chat.Chunk, error) {
	t.Helper()
	resp, err := c.Do(context.Background(), m, upstream.Request{API: api, Body: geminiBody(t, r), Stream: true})
	if err != nil {
		return "", nil, err
	}
	defer resp.Stream.Close()
	tr := gemini.NewStream(m.ID, 1)
	var text strings.Builder
	var chunks []chat.Chunk
	for {
		data, err := resp.Stream.Next()
		if errors.Is(err, io.EOF) {
			return text.String(), chunks, nil
		}
		if err != nil {
			return text.String(), chunks, err
		}
		out, err := tr.Event(data)
		if err != nil {
			return text.String(), chunks, err
		}
		for _, b := range out {
			var ch chat.Chunk
			if err := json.Unmarshal(b, &ch); err != nil {
				t.Fatalf("%v: %s", err, b)
			}
			for _, choice := range ch.Choices {
				if choice.Delta.Content != nil {
					text.WriteString(*choice.Delta.Content)
				}
			}
			chunks = append(chunks, ch)
		}
	}
}

// A Gemini API call through Do: POST …/models/{m}:generateContent with
// x-goog-api-key and no Authorization, the SDK-typed stand-in's reply
// translated.
func TestGeminiGenerate(t *testing.T) {
	srv := upstreamtest.Start(t)
	srv.SetGeminiKey("gk-test")
	c := geminiClient(t, 5, "")
	m := geminiModel(srv, "gemini-a")
	sys := "Be brief."
	comp := reply(t, c, m, upstream.APIGemini, &chat.Request{Messages: append([]chat.Message{{Role: "system", Content: sys}}, userMessage(chat.TextPart("hi there"))...)})
	ch, _ := comp.First()
	if ch.Message.Content == nil || *ch.Message.Content != "Hello from gemini-a: hi there" || ch.FinishReason != "stop" {
		t.Fatalf("reply %+v", comp)
	}
	if comp.Usage == nil || comp.Usage.CompletionTokens != 5 || comp.Usage.PromptTokens == 0 {
		t.Fatalf("usage %+v", comp.Usage)
	}
	h := srv.LastGeminiHeaders("gemini-a")
	if h.Get("X-Goog-Api-Key") != "gk-test" || h.Get("Authorization") != "" {
		t.Fatalf("headers %v", h)
	}
	if _, ok := srv.LastRequest("gemini-a")["systemInstruction"]; !ok {
		t.Fatalf("no systemInstruction in %v", srv.LastRequest("gemini-a"))
	}
}

// A Gemini stream through Do: streamGenerateContent?alt=sse, read to the
// body's end after the finishing event, translated to chunks ending with
// the finish reason and a usage chunk.
func TestGeminiStream(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := geminiClient(t, 5, "")
	text, chunks, err := streamed(t, c, geminiModel(srv, "gemini-s"), upstream.APIGemini, &chat.Request{Messages: userMessage(chat.TextPart("stream me"))})
	if err != nil || text != "Hello from gemini-s: stream me" {
		t.Fatalf("text %q (%v)", text, err)
	}
	last, finish := chunks[len(chunks)-1], chunks[len(chunks)-2]
	if last.Usage == nil || last.Usage.CompletionTokens != 5 || len(last.Choices) != 0 {
		t.Fatalf("last chunk %+v", last)
	}
	if f := finish.Choices[0].FinishReason; f == nil || *f != "stop" {
		t.Fatalf("finish chunk %+v", finish)
	}
}

// A stream that ends without a finishing event is cut; one whose
// upstream sends an error event mid-stream is cut with the event.
func TestGeminiStreamCut(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := geminiClient(t, 5, "")
	srv.SetGemini("gemini-nf", upstreamtest.GeminiBehavior{NoFinish: true})
	if _, _, err := streamed(t, c, geminiModel(srv, "gemini-nf"), upstream.APIGemini, &chat.Request{Messages: userMessage(chat.TextPart("a b c"))}); !errors.Is(err, upstream.ErrCut) {
		t.Fatalf("no finish: %v", err)
	}
	srv.SetGemini("gemini-ee", upstreamtest.GeminiBehavior{ErrorAfter: 2})
	text, _, err := streamed(t, c, geminiModel(srv, "gemini-ee"), upstream.APIGemini, &chat.Request{Messages: userMessage(chat.TextPart("a b c"))})
	var ee *upstream.EventError
	if !errors.Is(err, upstream.ErrCut) || !errors.As(err, &ee) || ee.Type != "UNAVAILABLE" || text != "Hello from " {
		t.Fatalf("error event: %q, %v", text, err)
	}
}

// writeFile writes s to a file of its own and returns its path.
func writeFile(t testing.TB, s string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
