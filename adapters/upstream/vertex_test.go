package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/chat"
)

// Gemini on Vertex AI: …/projects/{p}/locations/{l}/publishers/google/models/{m}
// with a bearer token the loopback token endpoint granted for the
// service account's signed assertion (the JSON's token_uri), fetched
// once and reused, for a reply and for a stream.
func TestVertexGenerate(t *testing.T) {
	srv := upstreamtest.Start(t)
	m, path := vertexModel(t, srv, "gemini-v")
	c := geminiClient(t, 5, path)
	comp := reply(t, c, m, upstream.APIVertex, &chat.Request{Messages: userMessage(chat.TextPart("hi"))})
	if ch, _ := comp.First(); ch.Message.Content == nil || *ch.Message.Content != "Hello from gemini-v: hi" {
		t.Fatalf("reply %+v", comp)
	}
	text, _, err := streamed(t, c, m, upstream.APIVertex, &chat.Request{Messages: userMessage(chat.TextPart("and stream"))})
	if err != nil || text != "Hello from gemini-v: and stream" {
		t.Fatalf("stream %q (%v)", text, err)
	}
	h := srv.LastGeminiHeaders("gemini-v")
	if !strings.HasPrefix(h.Get("Authorization"), "Bearer ya29.test-") || h.Get("X-Goog-Api-Key") != "" {
		t.Fatalf("headers %v", h)
	}
	if n := srv.TokenRequests(); n != 1 {
		t.Fatalf("%d token requests, want 1", n)
	}
}

// A token endpoint that fails is a retryable failure of the call,
// counted by the breaker, and nothing reaches the model.
func TestVertexTokenFailure(t *testing.T) {
	srv := upstreamtest.Start(t)
	m, path := vertexModel(t, srv, "gemini-tf")
	c := geminiClient(t, 1, path)
	srv.SetTokenFailure(503)
	_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Body: geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("x"))})})
	var ue *upstream.Error
	if !errors.Is(err, upstream.ErrToken) || !errors.As(err, &ue) || !ue.Retryable {
		t.Fatalf("err = %v", err)
	}
	if n, tr, st := srv.Calls("gemini-tf"), srv.TokenRequests(), c.BreakerStates()["gemini-tf"]; n != 0 || tr == 0 || st != "open" {
		t.Fatalf("%d calls, %d token requests, breaker %s", n, tr, st)
	}
}

// A Vertex AI model without its project, location or credentials, or
// whose credentials file cannot be read or is not a service account, is
// not configured: skipped (retryable), no token asked, no breaker.
func TestVertexNotConfigured(t *testing.T) {
	srv := upstreamtest.Start(t)
	good, path := vertexModel(t, srv, "gemini-nc")
	body := geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("x"))})
	noProject := good
	noProject.Project = ""
	for _, tc := range []struct {
		name string
		path string
	}{
		{"no project", path},
		{"no file", filepath.Join(t.TempDir(), "absent.json")},
		{"not a service account", writeFile(t, `{"type":"external_account","audience":"x","subject_token_type":"y","token_url":"http://127.0.0.1:1/token","credential_source":{"executable":{"command":"/bin/true"}}}`)},
		{"unset", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := good
			if tc.name == "no project" {
				m = noProject
			}
			_, err := geminiClient(t, 1, tc.path).Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Body: body})
			var ue *upstream.Error
			if !errors.Is(err, upstream.ErrNotConfigured) || !errors.As(err, &ue) || !ue.Retryable {
				t.Fatalf("err = %v", err)
			}
		})
	}
	if n := srv.TokenRequests(); n != 0 {
		t.Fatalf("%d token requests", n)
	}
}

// Claude on Vertex AI (a model of vendor anthropic): …/publishers/anthropic/models/{m}:rawPredict
// (:streamRawPredict for a stream) with the bearer token, the body a
// Messages request without model and with anthropic_version
// vertex-2023-10-16, the client's anthropic-beta passed on, no x-api-key
// or anthropic-version header; the reply and the stream are Anthropic's,
// their usage (prompt caching too) counted.
func TestVertexAnthropic(t *testing.T) {
	srv := upstreamtest.Start(t)
	m, path := vertexModel(t, srv, "claude-v")
	m.Vendor, m.UpstreamModel = "anthropic", "claude-v@20250929"
	c := geminiClient(t, 5, path)
	system := `,"system":[{"type":"text","text":"` + strings.Repeat("You are a careful assistant. ", 40) + `","cache_control":{"type":"ephemeral"}}]`
	var usages []int64
	for range 2 {
		resp, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Body: messagesBody("claude-v", false, system), AnthropicBeta: []string{"context-1m-2025-08-07"}})
		if err != nil {
			t.Fatal(err)
		}
		var msg sdk.Message
		if err := json.Unmarshal(resp.Data, &msg); err != nil || msg.Content[0].Text != "Hello from claude-v@20250929: hi there" {
			t.Fatalf("reply %s (%v)", resp.Data, err)
		}
		usages = append(usages, resp.Usage.CacheReadInputTokens)
	}
	if usages[0] != 0 || usages[1] < 250 {
		t.Fatalf("cache reads %v", usages)
	}
	h := srv.LastHeaders("claude-v@20250929")
	if !strings.HasPrefix(h.Get("Authorization"), "Bearer ya29.test-") || h.Get("X-Api-Key") != "" || h.Get("Anthropic-Version") != "" || h.Get("Anthropic-Beta") != "context-1m-2025-08-07" {
		t.Fatalf("headers %v", h)
	}
	resp, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Stream: true, Body: messagesBody("claude-v", true, "")})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	names, err := readEvents(t, resp.Stream)
	if err != nil || names[0] != "message_start" || names[len(names)-1] != "message_stop" {
		t.Fatalf("events %v (%v)", names, err)
	}
	if u := resp.Stream.Usage(); u.InputTokens <= 0 || u.OutputTokens != 5 {
		t.Fatalf("usage %+v", u)
	}
	// A body that states its stream otherwise than the call is the
	// client's 400, refused before it goes out.
	_, err = c.Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Stream: true, Body: messagesBody("claude-v", false, "")})
	var ue *upstream.Error
	if !errors.As(err, &ue) || ue.Status != 400 || ue.Retryable {
		t.Fatalf("err = %v", err)
	}
}

// A token Vertex AI refuses (401: revoked, the key rotated) fails the
// call (retryable) and is not used again: the next call fetches a new
// one.
func TestVertexTokenRevoked(t *testing.T) {
	srv := upstreamtest.Start(t)
	m, path := vertexModel(t, srv, "gemini-rv")
	c := geminiClient(t, 5, path)
	r := &chat.Request{Messages: userMessage(chat.TextPart("x"))}
	reply(t, c, m, upstream.APIVertex, r)
	srv.RevokeTokens()
	_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIVertex, Body: geminiBody(t, r)})
	var ue *upstream.Error
	if !errors.As(err, &ue) || ue.Status != 401 || !ue.Retryable {
		t.Fatalf("err = %v", err)
	}
	reply(t, c, m, upstream.APIVertex, r)
	if n := srv.TokenRequests(); n != 2 {
		t.Fatalf("%d token requests, want 2", n)
	}
}
