package main_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// TestGatewayAzureOpenAI: through `arr serve`, a chat completion and a
// Messages request (translated) routed to an azure_openai model reach its
// deployment with the catalog's api-version and the api-key header, and
// come back with routing naming the model.
func TestGatewayAzureOpenAI(t *testing.T) {
	up := upstreamtest.Start(t)
	az := catModel("gpt-4o-azure", "openai", "gpt-4o", strings.TrimSuffix(up.URL, "/v1"), 0.0025, 0.01, 0.91)
	az["api"], az["api_version"], az["deployment"] = "azure_openai", "2024-10-21", "gpt4o-prod"
	b, _ := json.Marshal(map[string]any{"tiers": []any{map[string]any{"name": "mid", "models": []any{az}}}})
	file := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "ARR_CATALOG="+file, "ARR_TEST_UPSTREAM_KEY=sk-azure", "ARR_UPSTREAM_TIMEOUT=2s")
	e.up()
	e.createAccount("azure@example.com", "enterprise")
	g := &gw{env: e, up: up, key: e.mint("azure@example.com", "gateway").Secret}

	code, _, out := g.chat(t, map[string]any{"model": "mid", "messages": userMsg("hi azure")})
	if code != http.StatusOK || routingOf(t, out)["model"] != "gpt-4o-azure" {
		t.Fatalf("chat: %d %v", code, out)
	}
	call, ok := up.LastAzure("gpt4o-prod")
	if !ok || call.APIVersion != "2024-10-21" || call.APIKey != "sk-azure" || !strings.Contains(string(call.Body), `"hi azure"`) {
		t.Fatalf("the Azure stand-in saw %+v", call)
	}

	pg := &passGateway{env: e, up: up, key: g.key}
	code, body := pg.postMessages(t, `{"model":"mid","max_tokens":64,"messages":[{"role":"user","content":"hi from messages"}]}`)
	if code != http.StatusOK || !strings.Contains(string(body), `"model":"gpt-4o-azure"`) || !strings.Contains(string(body), `"type":"message"`) {
		t.Fatalf("messages: %d %s", code, body)
	}
	if call, _ := up.LastAzure("gpt4o-prod"); !strings.Contains(string(call.Body), "hi from messages") {
		t.Fatalf("the Azure stand-in saw %+v", call)
	}
}
