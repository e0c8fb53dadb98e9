package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/shared"
)

// TestGatewayOfficialGoClient: github.com/openai/openai-go, changing only
// the base URL and the key, does a plain completion, a stream with usage,
// a tool-call round trip and JSON mode, and reads routing from each.
func TestGatewayOfficialGoClient(t *testing.T) {
	g := newGateway(t, "enterprise")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := openai.NewClient(option.WithBaseURL(g.gateway+"/v1/"), option.WithAPIKey(g.key), option.WithMaxRetries(0))

	type routing struct {
		Tier      string `json:"tier"`
		Model     string `json:"model"`
		AuditHash string `json:"audit_hash"`
		CacheHit  bool   `json:"cache_hit"`
	}
	routingOfRaw := func(t *testing.T, raw string) routing {
		t.Helper()
		var r routing
		if err := json.Unmarshal([]byte(raw), &r); err != nil || len(r.AuditHash) != 64 || r.Tier == "" {
			t.Fatalf("routing %q: %v", raw, err)
		}
		return r
	}

	// Plain.
	resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "auto", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Choices[0].Message.Content, "Hello from") {
		t.Fatalf("content %q", resp.Choices[0].Message.Content)
	}
	r := routingOfRaw(t, resp.JSON.ExtraFields["routing"].Raw())
	if r.Tier != "nano" {
		t.Fatalf("routing %+v", r)
	}

	// Streamed with usage.
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: "auto", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Stream some words")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	var streamRouting string
	for stream.Next() {
		ch := stream.Current()
		acc.AddChunk(ch)
		if f, ok := ch.JSON.ExtraFields["routing"]; ok {
			streamRouting = f.Raw()
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(acc.Choices[0].Message.Content, "Hello from") || acc.Usage.CompletionTokens == 0 || acc.Usage.PromptTokens == 0 {
		t.Fatalf("stream: %q usage %+v", acc.Choices[0].Message.Content, acc.Usage)
	}
	routingOfRaw(t, streamRouting)

	// Tool-call round trip with parallel calls.
	tool := func(name string) openai.ChatCompletionToolParam {
		return openai.ChatCompletionToolParam{Function: shared.FunctionDefinitionParam{Name: name,
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
	}
	params := openai.ChatCompletionNewParams{
		Model: "auto", Tools: []openai.ChatCompletionToolParam{tool("get_weather"), tool("get_time")},
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather and time in Paris?")},
	}
	first, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	calls := first.Choices[0].Message.ToolCalls
	if first.Choices[0].FinishReason != "tool_calls" || len(calls) != 2 {
		t.Fatalf("tool calls: %+v", first.Choices[0])
	}
	routingOfRaw(t, first.JSON.ExtraFields["routing"].Raw())
	params.Messages = append(params.Messages, first.Choices[0].Message.ToParam())
	for _, c := range calls {
		params.Messages = append(params.Messages, openai.ToolMessage(c.Function.Name+": ok", c.ID))
	}
	second, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(second.Choices[0].Message.Content, "get_weather: ok; get_time: ok") {
		t.Fatalf("tool results: %q", second.Choices[0].Message.Content)
	}
	routingOfRaw(t, second.JSON.ExtraFields["routing"].Raw())

	// JSON mode.
	jr, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "auto", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Give me a JSON object")},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(jr.Choices[0].Message.Content), &obj); err != nil {
		t.Fatalf("json_object content %q: %v", jr.Choices[0].Message.Content, err)
	}
	routingOfRaw(t, jr.JSON.ExtraFields["routing"].Raw())
	if last := g.up.LastRequest(r.Model); last["response_format"] == nil {
		t.Fatalf("response_format did not reach the upstream: %v", last)
	}

	// Errors surface as the SDK's typed errors.
	_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: "gpt-17", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")},
	})
	var apiErr *openai.Error
	if !errorsAs(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" {
		t.Fatalf("unknown model through the SDK: %v", err)
	}
}

// TestGatewayOfficialNodeClient runs scripts/clients/openai-node/check.mjs
// (the `openai` npm package; scripts/test.sh installs it) against the
// gateway.
func TestGatewayOfficialNodeClient(t *testing.T) {
	dir, _ := filepath.Abs("../../scripts/clients/openai-node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		t.Fatalf("the openai npm package is not installed in %s: run scripts/test.sh (or npm ci there)", dir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: run scripts/test.sh, which installs it")
	}
	g := newGateway(t, "enterprise")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "check.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ARR_BASE_URL="+g.gateway+"/v1", "ARR_API_KEY="+g.key)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node check.mjs: %v\n%s\n%s", err, out, stderr)
	}
	var rep struct {
		Plain struct {
			Routing struct {
				AuditHash string `json:"audit_hash"`
			} `json:"routing"`
		} `json:"plain"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || len(rep.Problems) != 0 || len(rep.Plain.Routing.AuditHash) != 64 {
		t.Fatalf("node report %s: %v", out, err)
	}
	t.Logf("node client: %s", out)
}
