package main_test

import (
	"bytes"
	"context"
	"encoding/base64"
	bin "encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// embedRouting is the routing object of an embeddings reply.
type embedRouting struct {
	Tier       string  `json:"tier"`
	Model      string  `json:"model"`
	Dimensions int     `json:"dimensions"`
	AuditHash  string  `json:"audit_hash"`
	CostUSD    float64 `json:"cost_usd"`
	Attempts   int     `json:"attempts"`
}

// embed posts an embeddings request with the gateway's key.
func (g *gw) embed(t testing.TB, body any) (int, http.Header, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, g.gateway+"/v1/embeddings", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+g.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /v1/embeddings: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("embeddings: %d, not JSON: %q", resp.StatusCode, raw)
	}
	return resp.StatusCode, resp.Header, out
}

// sameFloats says whether got (float64s the client decoded) are want's
// float32s.
func sameFloats(got []float64, want []float32) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if float32(got[i]) != want[i] {
			return false
		}
	}
	return true
}

func float32sOf(t testing.TB, b64 string) []float32 {
	t.Helper()
	buf, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(buf)%4 != 0 {
		t.Fatalf("not base64 float32s: %q", b64)
	}
	out := make([]float32, len(buf)/4)
	for i := range out {
		out[i] = math.Float32frombits(bin.LittleEndian.Uint32(buf[4*i:]))
	}
	return out
}

// TestGatewayEmbeddings: the official Go client (github.com/openai/openai-go),
// with only the base URL and the key changed, embeds a string, an array
// shortened by dimensions, token arrays and base64; the vectors are the
// upstream's, the reply carries routing and X-Arr-Audit-Hash, and is
// counted against the plan. Bad requests are clear 400s, a failing model
// fails over within its tier; every answered request is in the audit
// chain (arr audit verify checks it, its payload says operation
// embeddings) and in GET /v1/usage under its tier.
func TestGatewayEmbeddings(t *testing.T) {
	g := newGateway(t, "enterprise")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := openai.NewClient(option.WithBaseURL(g.gateway+"/v1/"), option.WithAPIKey(g.key), option.WithMaxRetries(0))
	var httpResp *http.Response
	one, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: openai.EmbeddingModelTextEmbedding3Small, Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hello world")},
	}, option.WithResponseInto(&httpResp))
	if err != nil {
		t.Fatal(err)
	}
	hdr := httpResp.Header
	var r embedRouting
	if err := json.Unmarshal([]byte(one.JSON.ExtraFields["routing"].Raw()), &r); err != nil {
		t.Fatal(err)
	}
	if len(one.Data) != 1 || !sameFloats(one.Data[0].Embedding, upstreamtest.Vector("text-embedding-3-small", "hello world", 1536)) {
		t.Fatalf("vector of %d numbers is not the upstream's", len(one.Data[0].Embedding))
	}
	if r.Tier != "embed-small" || r.Model != "text-embedding-3-small" || r.Dimensions != 1536 || len(r.AuditHash) != 64 ||
		hdr.Get("X-Arr-Audit-Hash") != r.AuditHash || hdr.Get("X-RateLimit-Remaining") == "" || one.Usage.PromptTokens != 3 {
		t.Fatalf("routing %+v, usage %+v, headers %v", r, one.Usage, hdr)
	}
	hashes := []string{r.AuditHash}

	arr, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: "embed-large", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"alpha", "beta"}}, Dimensions: openai.Int(128),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(arr.Data) != 2 || !sameFloats(arr.Data[1].Embedding, upstreamtest.Vector("text-embedding-3-large", "beta", 128)) {
		t.Fatalf("array: %d vectors", len(arr.Data))
	}
	if err := json.Unmarshal([]byte(arr.JSON.ExtraFields["routing"].Raw()), &r); err != nil || r.Tier != "embed-large" || r.Dimensions != 128 {
		t.Fatalf("array routing %+v: %v", r, err)
	}
	hashes = append(hashes, r.AuditHash)

	toks, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model: "auto", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokenArrays: [][]int64{{1, 2, 3}, {4, 5}}},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatBase64,
	})
	if err != nil {
		t.Fatal(err)
	}
	var b64 string
	if len(toks.Data) != 2 || json.Unmarshal([]byte(toks.Data[0].JSON.Embedding.Raw()), &b64) != nil || toks.Usage.PromptTokens != 5 {
		t.Fatalf("token arrays in base64: %s", toks.RawJSON())
	}
	if got := float32sOf(t, b64); len(got) != 1536 || got[7] != upstreamtest.Vector("text-embedding-3-small", []int64{1, 2, 3}, 1536)[7] {
		t.Fatalf("base64 vector of %d float32s is not the upstream's", len(got))
	}
	_ = json.Unmarshal([]byte(toks.JSON.ExtraFields["routing"].Raw()), &r)
	hashes = append(hashes, r.AuditHash)

	// Refusals, as the SDK sees them and on the wire.
	_, err = client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "gpt-4.1-nano", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("x")}})
	var apiErr *openai.Error
	if !errorsAs(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "not_an_embedding_model" || apiErr.Param != "model" {
		t.Fatalf("a chat model for embeddings: %v", err)
	}
	embeddingRefusals(t, g)

	// Failover within the tier: the first model fails, the second answers.
	g.up.Set("text-embedding-3-small", upstreamtest.Behavior{Status: http.StatusInternalServerError})
	code, _, out := g.embed(t, map[string]any{"input": "fail over"})
	if err := remarshal(out["routing"], &r); err != nil || code != 200 || r.Model != "mistral-embed" || r.Attempts != 2 || r.Dimensions != 1024 {
		t.Fatalf("failover: %d %v", code, out)
	}
	hashes = append(hashes, r.AuditHash)
	// A named model has no other to fail over to.
	if code, _, out := g.embed(t, map[string]any{"model": "text-embedding-3-small", "input": "x"}); code != http.StatusBadGateway {
		t.Fatalf("a named model that fails: %d %v", code, out)
	} else if _, c, _ := errorOf(out); c != "upstream_unavailable" {
		t.Fatalf("a named model that fails: %v", out)
	}
	g.up.Reset()

	// The embedding series are on /metrics.
	if _, mb := get(t, g.gateway+"/metrics", nil); !strings.Contains(string(mb), `arr_gateway_embeddings_total{model="mistral-embed",tier="embed-small"} 1`) ||
		!strings.Contains(string(mb), `arr_gateway_embedding_upstream_failures_total{model="text-embedding-3-small"} 2`) {
		t.Fatalf("metrics without the embedding series:\n%s", mb)
	}

	// Feedback rates chat completions only.
	if code, out := g.postKeyed(t, "/v1/feedback", g.key, map[string]any{"audit_hash": hashes[0], "rating": 5}); code != 400 {
		t.Fatalf("feedback on an embeddings request: %d %v", code, out)
	} else if _, c, _ := errorOf(out); c != "not_a_completion" {
		t.Fatalf("feedback on an embeddings request: %v", out)
	}

	// The audit chain holds each answered request, and verifies.
	for _, h := range hashes {
		status, body := get(t, g.gateway+"/v1/audit/"+h, g.owner())
		var e struct {
			Verified bool `json:"verified"`
			Payload  struct {
				Operation    string `json:"operation"`
				Tier         string `json:"tier"`
				PromptTokens int64  `json:"prompt_tokens"`
				CostMicroUSD int64  `json:"cost_micro_usd"`
			} `json:"payload"`
		}
		if status != 200 || json.Unmarshal(body, &e) != nil || !e.Verified || e.Payload.Operation != "embeddings" || e.Payload.PromptTokens == 0 {
			t.Fatalf("audit entry %s: %d %s", h, status, body)
		}
	}
	var rep struct {
		OK      bool   `json:"ok"`
		Checked uint64 `json:"checked"`
	}
	g.mustArr(&rep, "audit", "verify", "--json")
	if !rep.OK || rep.Checked != uint64(len(hashes)) {
		t.Fatalf("arr audit verify: %+v, want ok over %d entries", rep, len(hashes))
	}

	// Usage counts them under their tiers.
	eventually(t, 10*time.Second, "embeddings in /v1/usage", func() bool {
		_, ub := get(t, g.gateway+"/v1/usage?days=1", map[string]string{"Authorization": "Bearer " + g.key})
		var u struct {
			ByTier map[string]struct {
				Requests         int64 `json:"requests"`
				PromptTokens     int64 `json:"prompt_tokens"`
				CompletionTokens int64 `json:"completion_tokens"`
			} `json:"by_tier"`
		}
		_ = json.Unmarshal(ub, &u)
		small, large := u.ByTier["embed-small"], u.ByTier["embed-large"]
		return small.Requests == 3 && large.Requests == 1 && small.PromptTokens >= 8 && small.CompletionTokens == 0
	})
}

// embeddingRefusals: each bad request is a 400 (404 for a model that
// does not exist) with a code and the field at fault, and an embedding
// model named for a chat completion is 400 not_a_chat_model.
func embeddingRefusals(t *testing.T, g *gw) {
	t.Helper()
	cases := []struct {
		name        string
		body        map[string]any
		status      int
		code, param string
	}{
		{"no input", map[string]any{"model": "auto"}, 400, "missing_input", "input"},
		{"empty string", map[string]any{"input": ""}, 400, "empty_input", "input"},
		{"empty array", map[string]any{"input": []string{}}, 400, "empty_input", "input"},
		{"an empty item", map[string]any{"input": []string{"a", ""}}, 400, "empty_input", "input[1]"},
		{"not text", map[string]any{"input": map[string]any{"text": "a"}}, 400, "invalid_type", "input"},
		{"strings and tokens mixed", map[string]any{"input": []any{"a", []int{1}}}, 400, "invalid_type", "input[1]"},
		{"a negative token", map[string]any{"input": []int{1, -2}}, 400, "invalid_value", "input"},
		{"chat tier", map[string]any{"model": "nano", "input": "a"}, 400, "not_an_embedding_model", "model"},
		{"unknown model", map[string]any{"model": "text-embedding-9", "input": "a"}, 404, "model_not_found", "model"},
		{"dimensions a model lacks", map[string]any{"model": "mistral-embed", "input": "a", "dimensions": 256}, 400, "dimensions_not_supported", "dimensions"},
		{"zero dimensions", map[string]any{"input": "a", "dimensions": 0}, 400, "invalid_value", "dimensions"},
		{"encoding", map[string]any{"input": "a", "encoding_format": "int8"}, 400, "invalid_value", "encoding_format"},
	}
	for _, tc := range cases {
		code, _, out := g.embed(t, tc.body)
		typ, c, param := errorOf(out)
		if code != tc.status || c != tc.code || param != tc.param || (code == 400 && typ != "invalid_request_error") {
			t.Errorf("%s: %d %v, want %d %s (param %s)", tc.name, code, out, tc.status, tc.code, tc.param)
		}
	}
	code, _, out := g.chat(t, map[string]any{"model": "text-embedding-3-small", "messages": userMsg("hi")})
	if _, c, _ := errorOf(out); code != 400 || c != "not_a_chat_model" {
		t.Errorf("an embedding model for chat: %d %v", code, out)
	}
}

func remarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// TestGatewayEmbeddingsNodeClient runs
// scripts/clients/openai-node/embeddings.mjs (the `openai` npm package)
// against the gateway and compares the vectors it decoded with the
// upstream's.
func TestGatewayEmbeddingsNodeClient(t *testing.T) {
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
	cmd := exec.CommandContext(ctx, node, "embeddings.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ARR_BASE_URL="+g.gateway+"/v1", "ARR_API_KEY="+g.key)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node embeddings.mjs: %v\n%s\n%s", err, out, stderr)
	}
	type vec struct {
		Length int       `json:"length"`
		Head   []float64 `json:"head"`
	}
	type part struct {
		Vectors []vec        `json:"vectors"`
		Routing embedRouting `json:"routing"`
	}
	var rep struct {
		Default, Array, Base64, Tokens part
		Problems                       []string `json:"problems"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || len(rep.Problems) != 0 {
		t.Fatalf("node report %s: %v", out, err)
	}
	checks := []struct {
		name  string
		got   vec
		model string
		input any
		dims  int
	}{
		{"default", rep.Default.Vectors[0], "text-embedding-3-small", "hello from node", 1536},
		{"array", rep.Array.Vectors[1], "text-embedding-3-small", "beta", 64},
		{"base64", rep.Base64.Vectors[0], "text-embedding-3-small", "gamma", 32},
		{"tokens", rep.Tokens.Vectors[1], "text-embedding-3-small", []int64{4, 5}, 1536},
	}
	for _, c := range checks {
		want := upstreamtest.Vector(c.model, c.input, c.dims)
		if c.got.Length != c.dims || !sameFloats(c.got.Head, want[:len(c.got.Head)]) || len(c.got.Head) == 0 {
			t.Errorf("%s: %+v is not the upstream's vector", c.name, c.got)
		}
	}
	if len(rep.Default.Routing.AuditHash) != 64 {
		t.Fatalf("node report %s", out)
	}
	var v struct {
		OK      bool   `json:"ok"`
		Checked uint64 `json:"checked"`
	}
	g.mustArr(&v, "audit", "verify", "--json")
	if !v.OK || v.Checked != 4 {
		t.Fatalf("arr audit verify: %+v, want ok over the 4 embeddings", v)
	}
}
