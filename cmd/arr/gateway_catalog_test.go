package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGatewayCatalogFile: ARR_CATALOG replaces the shipped catalog (tiers,
// models, upstream model ids, prices), and a broken catalog stops the
// gateway from starting with a message that says what is wrong.
func TestGatewayCatalogFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "catalog.json")
	catalog := `{"tiers":[
	  {"name":"nano","models":[{"id":"tiny-1","vendor":"acme","upstream_model":"tiny-1-q4","base_url":"http://127.0.0.1:1/v1","api_key_env":"ACME_KEY",
	    "input_usd_per_1k":0.00002,"output_usd_per_1k":0.00004,"quality":0.9,"context_window":8192}]},
	  {"name":"high","models":[{"id":"big-1","vendor":"acme","base_url":"http://127.0.0.1:1/v1",
	    "input_usd_per_1k":0.01,"output_usd_per_1k":0.03,"quality":0.99,"context_window":32768}]}]}`
	if err := os.WriteFile(file, []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, "enterprise", "ARR_CATALOG="+file)
	_, mb := get(t, g.gateway+"/v1/models", nil)
	var models struct {
		Data []struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
		} `json:"data"`
	}
	_ = json.Unmarshal(mb, &models)
	var ids []string
	for _, m := range models.Data {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, ",") != "auto,nano,high,tiny-1,big-1" {
		t.Fatalf("models from ARR_CATALOG: %v", ids)
	}
	code, _, out := g.chat(t, map[string]any{"messages": userMsg("Say hello")})
	r := routingOf(t, out)
	if code != 200 || r["model"] != "tiny-1" || g.up.Calls("tiny-1-q4") != 1 {
		t.Fatalf("completion: %d %v (upstream calls of tiny-1-q4: %d)", code, r, g.up.Calls("tiny-1-q4"))
	}
	// ARR_UPSTREAM_BASE_URL's key (ARR_UPSTREAM_API_KEY) is sent, not the
	// catalog's api_key_env.
	if got := g.up.LastAuthorization("tiny-1-q4"); got != "Bearer sk-test-upstream" {
		t.Fatalf("upstream Authorization %q", got)
	}
	// The shipped catalog's models are gone.
	if code, _, _ := g.chat(t, map[string]any{"messages": userMsg("x"), "model": "gpt-4.1"}); code != 404 {
		t.Fatalf("a model of the shipped catalog under ARR_CATALOG: %d", code)
	}

	if err := os.WriteFile(file, []byte(`{"tiers":[{"name":"huge","models":[]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code2 := g.arr("serve", "gateway", "--arr-gateway-addr", "127.0.0.1:0")
	if code2 == 0 || !strings.Contains(errs, `tier "huge"`) {
		t.Fatalf("a broken catalog: exit %d, %s", code2, errs)
	}
}
