package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/responses"
	"github.com/openai/openai-go/shared"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// wireModel is a model of the every-API catalog: its id, its upstream
// model (the stand-in's key) and its prices (input, cached input, cache
// write, output; US dollars per 1k tokens).
type wireModel struct {
	id, upstream string
	in, cached   float64
	write, out   float64
}

var (
	wireClaude       = wireModel{"claude-chat", "claude-sonnet-4-0", 0.003, 0.0003, 0.00375, 0.015}
	wireGemini       = wireModel{"gemini-chat", "gemini-2.5-flash", 0.0003, 0.000075, 0.0003, 0.0025}
	wireVertexGemini = wireModel{"vertex-gemini", "gemini-2.5-pro", 0.00125, 0.00031, 0.00125, 0.01}
	wireVertexClaude = wireModel{"vertex-claude", "claude-opus-4-1", 0.015, 0.0015, 0.01875, 0.075}
	wireBedrock      = wireModel{"bedrock-claude", "anthropic.claude-3-5-haiku-20241022-v1:0", 0.0008, 0.00008, 0.001, 0.004}
	wireModels       = []wireModel{wireClaude, wireGemini, wireVertexGemini, wireVertexClaude, wireBedrock}
)

// newWireGateway is `arr serve` over a catalog whose mid tier has a model
// of each native API, all at the loopback stand-ins: Anthropic's Messages,
// the Gemini API, Vertex AI (Gemini, and Claude; a service account whose
// token_uri is the stand-in's token endpoint) and Bedrock (SigV4 from the
// credentials in the environment, no metadata service, no config files).
func newWireGateway(t *testing.T) (*gw, *upstreamtest.Server) {
	t.Helper()
	up := upstreamtest.Start(t)
	dir := t.TempDir()
	sa, err := up.ServiceAccount("arr-gateway")
	if err != nil {
		t.Fatal(err)
	}
	saFile, empty := filepath.Join(dir, "sa.json"), filepath.Join(dir, "empty")
	for f, b := range map[string][]byte{saFile: sa, empty: nil} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	model := func(w wireModel, vendor, base string, fields map[string]any) map[string]any {
		m := catModel(w.id, vendor, w.upstream, base, w.in, w.out, 0.91)
		m["cached_input_usd_per_1k"], m["cache_write_usd_per_1k"] = w.cached, w.write
		for k, v := range fields {
			m[k] = v
		}
		if fields["api"] == "vertex" || fields["api"] == "bedrock" {
			delete(m, "api_key_env")
		}
		return m
	}
	vertex := map[string]any{"api": "vertex", "project": "arr-test", "location": "us-central1", "credentials_env": "ARR_TEST_VERTEX_SA"}
	models := []any{
		model(wireClaude, "anthropic", up.URL, map[string]any{"api": "anthropic"}),
		model(wireGemini, "google", up.GeminiURL(), map[string]any{"api": "gemini"}),
		model(wireVertexGemini, "google", up.URL, vertex),
		model(wireVertexClaude, "anthropic", up.URL, vertex),
		model(wireBedrock, "anthropic", up.BedrockURL, map[string]any{"api": "bedrock", "region": "us-east-1"}),
	}
	b, _ := json.Marshal(map[string]any{"tiers": []any{map[string]any{"name": "mid", "models": models}}})
	file := filepath.Join(dir, "catalog.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_CATALOG="+file, "ARR_TEST_UPSTREAM_KEY=sk-test", "ARR_UPSTREAM_TIMEOUT=5s",
		"ARR_UPSTREAM_BREAKER_FAILURES=2", "ARR_UPSTREAM_BREAKER_OPEN=1m", "ARR_TEST_VERTEX_SA="+saFile,
		"AWS_ACCESS_KEY_ID="+upstreamtest.BedrockAccessKey, "AWS_SECRET_ACCESS_KEY="+upstreamtest.BedrockSecretKey,
		"AWS_SESSION_TOKEN=", "AWS_PROFILE=", "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE="+empty, "AWS_SHARED_CREDENTIALS_FILE="+empty)
	e.up()
	e.createAccount("wire@example.com", "enterprise")
	return &gw{env: e, up: up, key: e.mint("wire@example.com", "gateway").Secret}, up
}

// wireRouting is the routing object's fields these tests read.
type wireRouting struct {
	Model      string  `json:"model"`
	AuditHash  string  `json:"audit_hash"`
	CostUSD    float64 `json:"cost_usd"`
	Attempts   int     `json:"attempts"`
	CacheRead  int64   `json:"cache_read_tokens"`
	CacheWrite int64   `json:"cache_write_tokens"`
}

// checkPriced checks routing against the client's usage and the audit
// entry against routing: the prompt's plain, cached and cache-written
// tokens each at w's price, rounded up to the micro-dollar.
func checkPriced(t *testing.T, g *gw, w wireModel, raw string, u openai.CompletionUsage) wireRouting {
	t.Helper()
	var ri wireRouting
	if err := json.Unmarshal([]byte(raw), &ri); err != nil || ri.AuditHash == "" || ri.Model != w.id {
		t.Fatalf("%s: routing %s", w.id, raw)
	}
	if ri.CacheRead != u.PromptTokensDetails.CachedTokens {
		t.Errorf("%s: routing reads %d, the client's usage %d cached", w.id, ri.CacheRead, u.PromptTokensDetails.CachedTokens)
	}
	perM := func(p float64) int64 { return int64(math.Round(p * 1e9)) }
	plain := u.PromptTokens - ri.CacheRead - ri.CacheWrite
	want := (plain*perM(w.in) + ri.CacheRead*perM(w.cached) + ri.CacheWrite*perM(w.write) + u.CompletionTokens*perM(w.out) + 999_999) / 1_000_000
	if got := int64(math.Round(ri.CostUSD * 1e6)); got != want {
		t.Errorf("%s: cost %d µ$, want %d (usage %+v, routing %+v)", w.id, got, want, u, ri)
	}
	v, _ := getAudit(t, g.gateway, ri.AuditHash, map[string]string{"Authorization": "Bearer " + g.key})
	var p struct {
		Prompt     int64  `json:"prompt_tokens"`
		Completion int64  `json:"completion_tokens"`
		CacheRead  int64  `json:"cache_read_tokens"`
		CacheWrite int64  `json:"cache_write_tokens"`
		Cost       int64  `json:"cost_micro_usd"`
		Model      string `json:"model"`
	}
	if json.Unmarshal(v.Payload, &p) != nil || p.Model != w.id || p.Prompt != u.PromptTokens || p.Completion != u.CompletionTokens ||
		p.CacheRead != ri.CacheRead || p.CacheWrite != ri.CacheWrite || p.Cost != want {
		t.Errorf("%s: audit payload %s, want %d µ$ and routing %+v", w.id, v.Payload, want, ri)
	}
	return ri
}

// TestGatewayChatEveryAPI: the official openai-go client sends chat
// completions through `arr serve` to a model of each native API: a reply
// and a stream each (the text, the usage, routing and the audit entry
// priced), one tool-call round trip each, and a repeated prefix whose
// cached tokens (Anthropic's cache writes then reads, Bedrock's cache
// points, Gemini's cached content) are shown in routing and billed at the
// cached prices.
func TestGatewayChatEveryAPI(t *testing.T) {
	g, up := newWireGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := openai.NewClient(option.WithBaseURL(g.gateway+"/v1/"), option.WithAPIKey(g.key), option.WithMaxRetries(0))
	up.Set(wireGemini.upstream, upstreamtest.Behavior{CachedTokens: 4})
	up.Set(wireVertexGemini.upstream, upstreamtest.Behavior{CachedTokens: 4})
	for _, w := range wireModels {
		t.Run(w.id, func(t *testing.T) {
			msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(strings.Repeat("You answer briefly. ", 40)), openai.UserMessage("hi " + w.id)}
			params := openai.ChatCompletionNewParams{Model: w.id, Messages: msgs, PromptCacheKey: openai.String("arr-wire")}
			var reads, writes int64
			for i := 0; i < 2; i++ {
				r, err := client.Chat.Completions.New(ctx, params)
				if err != nil {
					t.Fatalf("reply %d: %v", i, err)
				}
				if !strings.Contains(r.Choices[0].Message.Content, "hi "+w.id) || r.Choices[0].FinishReason != "stop" || r.Usage.CompletionTokens == 0 {
					t.Fatalf("reply %d: %s", i, r.RawJSON())
				}
				ri := checkPriced(t, g, w, r.JSON.ExtraFields["routing"].Raw(), r.Usage)
				reads, writes = reads+ri.CacheRead, writes+ri.CacheWrite
			}
			if reads == 0 || (writes == 0) != (w.id == wireGemini.id || w.id == wireVertexGemini.id) {
				t.Errorf("cache reads %d, writes %d over two calls of the same prefix", reads, writes)
			}

			stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: w.id, Messages: msgs,
				PromptCacheKey: openai.String("arr-wire"), StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
			var acc openai.ChatCompletionAccumulator
			var raw string
			var usage openai.CompletionUsage // the accumulator drops prompt_tokens_details
			for stream.Next() {
				ch := stream.Current()
				acc.AddChunk(ch)
				if ch.Usage.TotalTokens > 0 {
					usage = ch.Usage
				}
				if f, ok := ch.JSON.ExtraFields["routing"]; ok {
					raw = f.Raw()
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if len(acc.Choices) != 1 || !strings.Contains(acc.Choices[0].Message.Content, "hi "+w.id) || acc.Usage.CompletionTokens == 0 {
				t.Fatalf("stream: %+v", acc.ChatCompletion)
			}
			if ri := checkPriced(t, g, w, raw, usage); ri.CacheRead == 0 || usage.PromptTokens != acc.Usage.PromptTokens {
				t.Errorf("stream: no cache read of the prefix: %+v", ri)
			}

			wireToolRoundTrip(ctx, t, client, w)
			wireOtherIngress(ctx, t, g, client, w)
		})
	}
}

// wireOtherIngress: a Responses request (openai-go) and a Messages
// request that goes through chat reach w too. (Messages to an anthropic
// model is the pass-through, tested in gateway_passthrough_test.go.)
func wireOtherIngress(ctx context.Context, t *testing.T, g *gw, client openai.Client, w wireModel) {
	t.Helper()
	r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: w.id,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi from responses")}})
	if err != nil {
		t.Fatalf("responses: %v", err)
	}
	if ro := routingOfResponse(t, r); ro.Model != w.id || !strings.Contains(r.OutputText(), "hi from responses") || r.Status != responses.ResponseStatusCompleted {
		t.Fatalf("responses: %s", r.RawJSON())
	}
	if w.id == wireClaude.id {
		return
	}
	pg := &passGateway{env: g.env, up: g.up, key: g.key}
	code, body := pg.postMessages(t, `{"model":"`+w.id+`","max_tokens":64,"messages":[{"role":"user","content":"hi from messages"}]}`)
	if code != http.StatusOK || !strings.Contains(string(body), `"model":"`+w.id+`"`) || !strings.Contains(string(body), "hi from messages") {
		t.Fatalf("messages: %d %s", code, body)
	}
	if w.id != wireVertexClaude.id {
		return
	}
	// Claude on Vertex AI reads Messages: a Messages request passes
	// through to it with its blocks as they came (cache_control, an
	// unknown block field), as to an anthropic model.
	code, body = pg.postMessages(t, `{"model":"`+w.id+`","max_tokens":64,"system":[{"type":"text","text":"`+strings.Repeat("be brief. ", 40)+`","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi through vertex"}]}`)
	sent := string(g.up.LastBody(w.upstream))
	if code != http.StatusOK || !strings.Contains(sent, `"cache_control":{"type":"ephemeral"}`) || !strings.Contains(string(body), `"cache_creation_input_tokens"`) {
		t.Fatalf("messages passed through to Claude on Vertex: %d %s; the stand-in got %s", code, body, sent)
	}
}

// wireToolRoundTrip: the model calls the one tool offered, and answers
// with the tool's result sent back.
func wireToolRoundTrip(ctx context.Context, t *testing.T, client openai.Client, w wireModel) {
	t.Helper()
	params := openai.ChatCompletionNewParams{Model: w.id,
		Tools: []openai.ChatCompletionToolParam{{Function: shared.FunctionDefinitionParam{Name: "get_weather",
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}},
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")}}
	first, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatalf("tool call: %v", err)
	}
	calls := first.Choices[0].Message.ToolCalls
	if first.Choices[0].FinishReason != "tool_calls" || len(calls) != 1 || calls[0].Function.Name != "get_weather" || calls[0].ID == "" {
		t.Fatalf("tool call: %s", first.RawJSON())
	}
	params.Messages = append(params.Messages, first.Choices[0].Message.ToParam(), openai.ToolMessage("sunny, 21C", calls[0].ID))
	second, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatalf("tool result: %v", err)
	}
	if c := second.Choices[0].Message.Content; !strings.Contains(c, "Tool results:") || !strings.Contains(c, "sunny") {
		t.Fatalf("tool result: %s", second.RawJSON())
	}
}

// TestGatewayChatUpstreamRefusal: each native upstream's 400 reaches the
// openai-go client as its 400, in OpenAI's error shape (replied or
// streamed), is not retried on
// another model and never opens the breaker (more refusals than it takes
// failures, then the model answers); an overloaded or failing model of one
// API fails over to a model of another within the tier.
func TestGatewayChatUpstreamRefusal(t *testing.T) {
	g, up := newWireGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := openai.NewClient(option.WithBaseURL(g.gateway+"/v1/"), option.WithAPIKey(g.key), option.WithMaxRetries(0))
	for _, w := range []wireModel{wireClaude, wireGemini, wireVertexGemini, wireVertexClaude, wireBedrock} {
		params := openai.ChatCompletionNewParams{Model: w.id, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
		up.Set(w.upstream, upstreamtest.Behavior{Status: http.StatusBadRequest})
		for i := 0; i < 3; i++ {
			_, err := client.Chat.Completions.New(ctx, params)
			var ae *openai.Error
			if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || ae.Message == "" || ae.Type == "" {
				t.Fatalf("%s refusal %d: %v", w.id, i, err)
			}
		}
		stream := client.Chat.Completions.NewStreaming(ctx, params)
		for stream.Next() {
			t.Fatalf("%s: a refused stream sent %s", w.id, stream.Current().RawJSON())
		}
		var ae *openai.Error
		if err := stream.Err(); !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s streamed refusal: %v", w.id, err)
		}
		up.Reset()
		if r, err := client.Chat.Completions.New(ctx, params); err != nil || !strings.Contains(r.RawJSON(), `"model":"`+w.id+`"`) {
			t.Fatalf("%s after the refusals (breaker closed): %v", w.id, err)
		}
	}
	for _, w := range wireModels {
		if up.Calls(w.upstream) > 5 {
			t.Fatalf("%s called %d times: a refusal was retried", w.id, up.Calls(w.upstream))
		}
	}

	// Every model but Claude on Vertex (the dearest) fails (Anthropic's
	// 529, the rest 503): the tier answers from it, the others tried first.
	up.Reset()
	up.Set(wireClaude.upstream, upstreamtest.Behavior{Status: 529})
	for _, w := range []wireModel{wireGemini, wireVertexGemini, wireBedrock} {
		up.Set(w.upstream, upstreamtest.Behavior{Status: http.StatusServiceUnavailable})
	}
	r, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "mid", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("fail over")}})
	if err != nil {
		t.Fatal(err)
	}
	var ri wireRouting
	if json.Unmarshal([]byte(r.JSON.ExtraFields["routing"].Raw()), &ri) != nil || ri.Model != wireVertexClaude.id || !strings.Contains(r.Choices[0].Message.Content, "fail over") {
		t.Fatalf("failover: %s", r.RawJSON())
	}
	if ri.Attempts < 2 {
		t.Fatalf("failover in %d attempts", ri.Attempts)
	}
}
