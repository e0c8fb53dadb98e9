package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/routing"
)

// awsEnv points the standard AWS credential chain at the stand-in's key
// (from the environment) and nowhere else: no shared files, no EC2
// instance metadata service.
func awsEnv(t *testing.T) {
	t.Helper()
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": upstreamtest.BedrockAccessKey, "AWS_SECRET_ACCESS_KEY": upstreamtest.BedrockSecretKey,
		"AWS_SESSION_TOKEN": "", "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": none,
		"AWS_SHARED_CREDENTIALS_FILE": none, "AWS_PROFILE": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "",
		"AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
	} {
		t.Setenv(k, v)
	}
}

// bedrockClient is a client with the standard credential chain (awsEnv).
func bedrockClient(t *testing.T, breakerFailures uint32) *upstream.Client {
	t.Helper()
	awsEnv(t)
	c, err := upstream.New(upstream.Config{Timeout: 5 * time.Second, StreamIdleTimeout: 5 * time.Second,
		BreakerFailures: breakerFailures, BreakerOpenFor: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bedrockModel is a Bedrock catalog model on the stand-in; its upstream
// id has a colon, as Bedrock's ids do.
func bedrockModel(srv *upstreamtest.Server, id string) routing.Model {
	return routing.Model{ID: id, Vendor: "anthropic", UpstreamModel: "anthropic." + id + "-v1:0", BaseURL: srv.BedrockURL,
		API: string(upstream.APIBedrock), Region: "us-east-1"}
}

func chatBody(t *testing.T, m routing.Model, stream bool, msgs []chat.Message, edit func(*chat.Request)) []byte {
	t.Helper()
	r := chat.Request{Model: m.UpstreamModel, Messages: msgs, Stream: stream}
	if edit != nil {
		edit(&r)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func user(s string) []chat.Message { return []chat.Message{{Role: "user", Content: s}} }

func doBedrock(t *testing.T, c *upstream.Client, m routing.Model, stream bool, body []byte) (*upstream.Response, error) {
	t.Helper()
	return c.Do(context.Background(), m, upstream.Request{API: upstream.APIBedrock, Body: body, Stream: stream})
}

// completion reads a non-streamed call's chat completion.
func completion(t *testing.T, resp *upstream.Response) (chat.Completion, chat.Choice) {
	t.Helper()
	c, ch, err := chat.ReadCompletion(resp.Data)
	if err != nil {
		t.Fatalf("%v: %s", err, resp.Data)
	}
	return c, ch
}

// brStreamed is what readStream reads of a stream's chunks to its end:
// the text, the tool calls assembled, the finish reason and the usage
// chunk's usage.
type brStreamed struct {
	text   string
	calls  []chat.ToolCall
	finish string
	usage  *chat.Usage
}

func readStream(t *testing.T, s *upstream.Stream) (brStreamed, error) {
	t.Helper()
	defer s.Close()
	var out brStreamed
	var text strings.Builder
	for range 1000 {
		data, err := s.Next()
		if err != nil {
			out.text = text.String()
			return out, err
		}
		var ch chat.Chunk
		if err := json.Unmarshal(data, &ch); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		if ch.Usage != nil {
			out.usage = ch.Usage
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != nil {
				text.WriteString(*c.Delta.Content)
			}
			for _, tc := range c.Delta.ToolCalls {
				if tc.Index == len(out.calls) {
					out.calls = append(out.calls, chat.ToolCall{ID: tc.ID, Type: tc.Type, Function: chat.FunctionCall{Name: tc.Function.Name}})
				}
				out.calls[tc.Index].Function.Arguments += tc.Function.Arguments
			}
			if c.FinishReason != nil {
				out.finish = *c.FinishReason
			}
		}
	}
	t.Fatal("the stream did not end in 1000 chunks")
	return out, nil
}

// A non-streamed Converse call, signed by the standard chain's
// credentials from the environment: the stand-in checked the signature
// and read the body with the SDK's types; the reply is a chat
// completion with Bedrock's usage.
func TestBedrockConverse(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := bedrockClient(t, 5)
	m := bedrockModel(srv, "claude-b")
	msgs := append([]chat.Message{{Role: "system", Content: "Be brief."}}, user("hi there")...)
	max, temp := int64(64), 0.5
	resp, err := doBedrock(t, c, m, false, chatBody(t, m, false, msgs, func(r *chat.Request) { r.MaxCompletionTokens, r.Temperature = &max, &temp }))
	if err != nil {
		t.Fatal(err)
	}
	comp, ch := completion(t, resp)
	if *ch.Message.Content != "Hello from "+m.UpstreamModel+": hi there" || ch.FinishReason != "stop" || comp.Model != m.UpstreamModel {
		t.Fatalf("reply %s", resp.Data)
	}
	if comp.Usage == nil || comp.Usage.CompletionTokens != 5 || resp.Usage == nil || resp.Usage.OutputTokens != 5 || resp.Usage.PromptTokens() != comp.Usage.PromptTokens {
		t.Fatalf("usage %+v, Response.Usage %+v", comp.Usage, resp.Usage)
	}
	in := srv.LastConverse(m.UpstreamModel)
	if in == nil || len(in.System) != 1 || *in.InferenceConfig.MaxTokens != 64 || *in.InferenceConfig.Temperature != 0.5 {
		t.Fatalf("the request upstream: %+v", in)
	}
	if text := in.System[0].(*types.SystemContentBlockMemberText).Value; text != "Be brief." {
		t.Fatalf("system %q", text)
	}
}

// A streamed call: ConverseStream's event-stream frames come back as chat
// chunks, ending with the finish reason and a usage chunk, then io.EOF;
// Stream.Usage has Bedrock's counts.
func TestBedrockStream(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := bedrockClient(t, 5)
	m := bedrockModel(srv, "claude-s")
	resp, err := doBedrock(t, c, m, true, chatBody(t, m, true, user("stream this please"), nil))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readStream(t, resp.Stream)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("the stream ended with %v", err)
	}
	if got.text != "Hello from "+m.UpstreamModel+": stream this please" || got.finish != "stop" || got.usage == nil || got.usage.CompletionTokens != 6 {
		t.Fatalf("streamed %+v (usage %+v)", got, got.usage)
	}
	if u := resp.Stream.Usage(); u.OutputTokens != 6 || u.PromptTokens() != got.usage.PromptTokens {
		t.Fatalf("Stream.Usage %+v", u)
	}
}

var weatherTool = chat.Tool{Type: "function", Function: chat.Function{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}}}`)}}

// A tool round trip: the model's toolUse is a chat tool call (in a reply
// and in a stream); the tool's result goes back as a toolResult the
// stand-in matched to the toolUse before it.
func TestBedrockToolRoundTrip(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := bedrockClient(t, 5)
	m := bedrockModel(srv, "claude-t")
	tools := func(r *chat.Request) { r.Tools = []chat.Tool{weatherTool} }
	resp, err := doBedrock(t, c, m, false, chatBody(t, m, false, user("Oslo"), tools))
	if err != nil {
		t.Fatal(err)
	}
	_, ch := completion(t, resp)
	if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 || ch.Message.ToolCalls[0].Function.Name != "get_weather" ||
		ch.Message.ToolCalls[0].Function.Arguments != `{"input":"Oslo"}` {
		t.Fatalf("reply %s", resp.Data)
	}
	call := ch.Message.ToolCalls[0]
	resp, err = doBedrock(t, c, m, true, chatBody(t, m, true, user("Oslo"), tools))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readStream(t, resp.Stream); !errors.Is(err, io.EOF) || got.finish != "tool_calls" || len(got.calls) != 1 || got.calls[0] != call {
		t.Fatalf("streamed %+v (%v), want the call %+v", got, err, call)
	}
	turn := append(user("Oslo"), chat.Message{Role: "assistant", ToolCalls: []chat.ToolCall{call}}, chat.Message{Role: "tool", ToolCallID: call.ID, Content: "sunny"})
	resp, err = doBedrock(t, c, m, false, chatBody(t, m, false, turn, tools))
	if err != nil {
		t.Fatal(err)
	}
	if _, ch := completion(t, resp); *ch.Message.Content != "Tool results: sunny" || ch.FinishReason != "stop" {
		t.Fatalf("reply %s", resp.Data)
	}
}

// An image part (a data: URL) goes up as an image block with its bytes.
func TestBedrockImage(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := bedrockClient(t, 5)
	m := bedrockModel(srv, "claude-i")
	png := []byte("\x89PNG\r\n\x1a\n")
	text := "What is it?"
	msgs := []chat.Message{{Role: "user", Content: []chat.Part{{Type: "text", Text: &text},
		{Type: "image_url", ImageURL: &chat.ImageURL{URL: "data:image/png;base64,iVBORw0KGgo="}}}}}
	resp, err := doBedrock(t, c, m, false, chatBody(t, m, false, msgs, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, ch := completion(t, resp); *ch.Message.Content != "Hello from "+m.UpstreamModel+": What is it? [image png 8 bytes]" {
		t.Fatalf("reply %s", resp.Data)
	}
	img := srv.LastConverse(m.UpstreamModel).Messages[0].Content[1].(*types.ContentBlockMemberImage).Value
	if img.Format != types.ImageFormatPng || !bytes.Equal(img.Source.(*types.ImageSourceMemberBytes).Value, png) {
		t.Fatalf("image upstream %+v", img)
	}
}

// JSON mode: a forced tool whose input is the reply's text.
func TestBedrockJSONMode(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := bedrockClient(t, 5)
	m := bedrockModel(srv, "claude-j")
	resp, err := doBedrock(t, c, m, false, chatBody(t, m, false, user("a city"), func(r *chat.Request) { r.ResponseFormat = map[string]any{"type": "json_object"} }))
	if err != nil {
		t.Fatal(err)
	}
	if _, ch := completion(t, resp); *ch.Message.Content != `{"input":"a city"}` || ch.FinishReason != "stop" || len(ch.Message.ToolCalls) != 0 {
		t.Fatalf("reply %s", resp.Data)
	}
}

// Prompt caching: a request with prompt_cache_key puts a cache point
// after the system prompt; the first call writes the prefix, the second
// reads it. chat's usage counts both in prompt_tokens and the reads as
// cached_tokens; Response.Usage and Stream.Usage keep the writes.
func TestBedrockCacheUsage(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := bedrockClient(t, 5)
	m := bedrockModel(srv, "claude-c")
	msgs := append([]chat.Message{{Role: "system", Content: strings.Repeat("A long and stable system prompt. ", 40)}}, user("hi")...)
	key := "session-1"
	body := chatBody(t, m, false, msgs, func(r *chat.Request) { r.PromptCacheKey = &key })
	first, err := doBedrock(t, c, m, false, body)
	if err != nil {
		t.Fatal(err)
	}
	if u := first.Usage; u.CacheCreationInputTokens < 300 || u.CacheReadInputTokens != 0 {
		t.Fatalf("first call's usage %+v", u)
	}
	second, err := doBedrock(t, c, m, false, body)
	if err != nil {
		t.Fatal(err)
	}
	comp, _ := completion(t, second)
	u := second.Usage
	if u.CacheReadInputTokens != first.Usage.CacheCreationInputTokens || u.CacheCreationInputTokens != 0 ||
		comp.Usage.PromptTokensDetails.CachedTokens != u.CacheReadInputTokens || comp.Usage.PromptTokens != u.PromptTokens() {
		t.Fatalf("second call's usage %+v, chat's %+v", u, comp.Usage)
	}
	resp, err := doBedrock(t, c, m, true, chatBody(t, m, true, msgs, func(r *chat.Request) { r.PromptCacheKey = &key }))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readStream(t, resp.Stream)
	if !errors.Is(err, io.EOF) || got.usage.PromptTokensDetails.CachedTokens != u.CacheReadInputTokens || resp.Stream.Usage().CacheReadInputTokens != u.CacheReadInputTokens {
		t.Fatalf("stream's usage %+v (%v), Stream.Usage %+v", got.usage, err, resp.Stream.Usage())
	}
	if sys := srv.LastConverse(m.UpstreamModel).System; len(sys) != 2 {
		t.Fatalf("system blocks upstream %d, want the prompt and a cache point", len(sys))
	} else if _, ok := sys[1].(*types.SystemContentBlockMemberCachePoint); !ok {
		t.Fatalf("system[1] is %T", sys[1])
	}
}
