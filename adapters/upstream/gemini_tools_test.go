package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/translate/gemini"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/chat"
)

// A tool call round trip: the reply's two calls come back as tool_calls
// (the first carrying Gemini's thought signature in its id), the next
// request sends them and their results, which the stand-in checks pair
// up (as many, the same names, the signature back) and echoes.
func TestGeminiToolRoundTrip(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := geminiClient(t, 5, "")
	m := geminiModel(srv, "gemini-t")
	params := json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`)
	tools := []chat.Tool{{Type: "function", Function: chat.Function{Name: "lookup", Parameters: params}}, {Type: "function", Function: chat.Function{Name: "clock"}}}
	msgs := userMessage(chat.TextPart("Oslo"))
	comp := reply(t, c, m, upstream.APIGemini, &chat.Request{Messages: msgs, Tools: tools})
	ch, _ := comp.First()
	calls := ch.Message.ToolCalls
	if ch.FinishReason != "tool_calls" || len(calls) != 2 || calls[0].Function.Name != "lookup" || calls[0].Function.Arguments != `{"input":"Oslo"}` {
		t.Fatalf("reply %+v", ch)
	}
	if !strings.Contains(calls[0].ID, gemini.SignatureSep) || strings.Contains(calls[1].ID, gemini.SignatureSep) || calls[0].ID == calls[1].ID {
		t.Fatalf("ids %q, %q", calls[0].ID, calls[1].ID)
	}
	msgs = append(msgs, chat.Message{Role: "assistant", ToolCalls: calls},
		chat.Message{Role: "tool", ToolCallID: calls[1].ID, Content: "12:00"},
		chat.Message{Role: "tool", ToolCallID: calls[0].ID, Content: `{"found":true}`})
	comp = reply(t, c, m, upstream.APIGemini, &chat.Request{Messages: msgs, Tools: tools})
	ch, _ = comp.First()
	if want := `Tool results: clock={"output":"12:00"}; lookup={"found":true}`; ch.Message.Content == nil || *ch.Message.Content != want || ch.FinishReason != "stop" {
		t.Fatalf("reply %+v, want %s", ch, want)
	}
	// A call turn without a signature (begun on another model) is sent
	// with Google's sentinel, which Gemini 3 accepts in its place.
	calls[0].ID = "call_plain"
	msgs[1] = chat.Message{Role: "assistant", ToolCalls: calls}
	msgs[3].ToolCallID = "call_plain"
	if comp = reply(t, c, m, upstream.APIGemini, &chat.Request{Messages: msgs, Tools: tools}); comp.Choices[0].FinishReason != "stop" {
		t.Fatalf("reply %+v", comp)
	}
	turn := srv.LastRequest("gemini-t")["contents"].([]any)[1].(map[string]any)["parts"].([]any)[0].(map[string]any)
	if turn["thoughtSignature"] != gemini.SkipSignature {
		t.Fatalf("the call turn's first part %v", turn)
	}
	// One the stand-in refuses (a function response with no call) is
	// the client's 400, kept.
	_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIGemini,
		Body: []byte(`{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`)})
	var ue *upstream.Error
	if !errors.As(err, &ue) || ue.Status != 400 || ue.Retryable || ue.Type != "INVALID_ARGUMENT" {
		t.Fatalf("err = %v", err)
	}
}

// An image in a data: URL goes as inlineData, decoded by the SDK's types
// (the stand-in tells its type and size).
func TestGeminiImage(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := geminiClient(t, 5, "")
	img := chat.Part{Type: "image_url", ImageURL: &chat.ImageURL{URL: "data:image/png;base64,iVBORw0KGgo="}}
	comp := reply(t, c, geminiModel(srv, "gemini-i"), upstream.APIGemini, &chat.Request{Messages: userMessage(chat.TextPart("what is this?"), img)})
	ch, _ := comp.First()
	if want := "Hello from gemini-i: what is this? [image/png, 8 bytes]"; ch.Message.Content == nil || *ch.Message.Content != want {
		t.Fatalf("reply %+v, want %s", ch, want)
	}
}

// Cached content tokens are the usage's cached_tokens, part of the
// prompt's, in a reply and in a stream's usage chunk.
func TestGeminiCachedTokens(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := geminiClient(t, 5, "")
	srv.Set("gemini-c", upstreamtest.Behavior{CachedTokens: 96})
	m := geminiModel(srv, "gemini-c")
	r := &chat.Request{Messages: userMessage(chat.TextPart(strings.Repeat("a long shared prefix ", 40)))}
	comp := reply(t, c, m, upstream.APIGemini, r)
	if u := comp.Usage; u == nil || u.PromptTokensDetails == nil || u.PromptTokensDetails.CachedTokens != 96 || u.PromptTokens < 96 {
		t.Fatalf("usage %+v", comp.Usage)
	}
	_, chunks, err := streamed(t, c, m, upstream.APIGemini, r)
	if err != nil {
		t.Fatal(err)
	}
	if u := chunks[len(chunks)-1].Usage; u == nil || u.PromptTokensDetails.CachedTokens != 96 {
		t.Fatalf("stream usage %+v", u)
	}
}

// Gemini's own 400 keeps its status, type and body for the client and
// never counts against the breaker; a 400 saying the API key is invalid
// is the operator's (retryable, counted), never shown to the client.
func TestGemini400Kept(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := geminiClient(t, 1, "")
	m := geminiModel(srv, "gemini-400")
	bad := []byte(`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"responseJsonSchema":{"type":"object"}}}`)
	for range 3 {
		_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIGemini, Body: bad})
		var ue *upstream.Error
		if !errors.As(err, &ue) || ue.Status != 400 || ue.Retryable || ue.Type != "INVALID_ARGUMENT" {
			t.Fatalf("err = %v", err)
		}
		if e, ok := gemini.ParseError(ue.Body); !ok || !strings.Contains(e.Message, "responseJsonSchema") {
			t.Fatalf("body %s", ue.Body)
		}
	}
	good := geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("x"))})
	if _, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIGemini, Body: good}); err != nil || c.BreakerStates()["gemini-400"] != "closed" {
		t.Fatalf("after three 400s (breaker of 1 failure): %v, breaker %s", err, c.BreakerStates()["gemini-400"])
	}
	srv.SetGeminiKey("another-key")
	_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIGemini, Body: good})
	var ue *upstream.Error
	if !errors.As(err, &ue) || ue.Status != 400 || !ue.Retryable {
		t.Fatalf("invalid key: %v", err)
	}
	if st := c.BreakerStates()["gemini-400"]; st != "open" {
		t.Fatalf("breaker %s after the operator's key failed", st)
	}
}

// A 503 (and a 429) is retryable and counted: the breaker opens after
// BreakerFailures of them and refuses the next call without sending it.
func TestGemini503Retried(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := geminiClient(t, 2, "")
	srv.Set("gemini-5", upstreamtest.Behavior{Status: 503})
	srv.Set("gemini-q", upstreamtest.Behavior{Status: 429})
	body := geminiBody(t, &chat.Request{Messages: userMessage(chat.TextPart("x"))})
	for _, id := range []string{"gemini-5", "gemini-q"} {
		for i := range 3 {
			_, err := c.Do(context.Background(), geminiModel(srv, id), upstream.Request{API: upstream.APIGemini, Body: body})
			var ue *upstream.Error
			if !errors.As(err, &ue) || !ue.Retryable {
				t.Fatalf("%s call %d: %v", id, i, err)
			}
			if i == 2 && !errors.Is(err, upstream.ErrBreakerOpen) {
				t.Fatalf("%s: the third call: %v", id, err)
			}
			if i < 2 && (ue.Type != map[string]string{"gemini-5": "UNAVAILABLE", "gemini-q": "RESOURCE_EXHAUSTED"}[id]) {
				t.Fatalf("%s: type %q", id, ue.Type)
			}
		}
		if n := srv.Calls(id); n != 2 {
			t.Fatalf("%s: %d calls reached the upstream, want 2", id, n)
		}
	}
}
