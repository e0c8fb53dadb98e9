package main_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOneParsingRule: the three services read their input by one rule
// (docs/api-input.md): a query parameter is given once and read exactly
// as sent (no space inside a bbox), a JSON body has no duplicate key
// (400 naming it), and the gateway accepts, without reading them, the
// fields the providers' own responses carry in the messages that clients
// echo back.
func TestOneParsingRule(t *testing.T) {
	g := newGateway(t, "pro")
	e := g.env
	e.createAccount("rule@example.com", "free")
	ans := e.mint("rule@example.com", "answer")
	bearer := func(k string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + k, "Content-Type": "application/json", "anthropic-version": "2023-06-01"}
	}
	poly := `{"type":"Polygon","coordinates":[[[-76.7,39.2],[-76.5,39.2],[-76.5,39.4],[-76.7,39.2]]]}`
	for _, c := range []struct {
		name, method, url, body string
		headers                 map[string]string
		status                  int
		field                   string
	}{
		{"space in bbox", "GET", e.records + "/api/v1/parcels?bbox=-76.7,%2039.2,-76.5,39.4", "", nil, 400, "bbox"},
		{"space around bbox", "GET", e.records + "/api/v1/parcels?bbox=%20-76.7,39.2,-76.5,39.4", "", nil, 400, "bbox"},
		{"q twice", "GET", e.answer + "/api/v1/answer?q=one&q=two", "", bearer(ans.Secret), 400, "q"},
		{"unknown answer parameter", "GET", e.answer + "/api/v1/answer?q=one&qq=two", "", bearer(ans.Secret), 400, "qq"},
		{"duplicate key, records", "POST", e.records + "/api/v1/parcels/query", `{"geometry":` + poly + `,"limit":5,"limit":6}`, nil, 400, "limit"},
		{"duplicate key, answer", "POST", e.answer + "/api/v1/answer", `{"q":"one","q":"two"}`, bearer(ans.Secret), 400, "q"},
		{"unknown answer field", "POST", e.answer + "/api/v1/answer", `{"q":"one","tierr":"pro"}`, bearer(ans.Secret), 400, "tierr"},
		{"unknown field in an answer turn", "POST", e.answer + "/api/v1/answer", `{"q":"one","messages":[{"role":"user","content":"x","name":"me"}]}`, bearer(ans.Secret), 400, "messages[0].name"},
		{"space in include_domains", "GET", e.answer + "/api/v1/answer?q=one&include_domains=127.0.0.1,%20localhost", "", bearer(ans.Secret), 400, "include_domains"},
		{"space in layers", "GET", e.records + "/api/v1/parcels?bbox=-76.7,39.2,-76.5,39.4&layers=vacant,%20tax_sale", "", nil, 400, "layers"},
		{"unknown feedback field", "POST", g.gateway + "/v1/feedback", `{"audit_hash":"` + strings.Repeat("a", 64) + `","rating":5,"stars":5}`, bearer(g.key), 400, "stars"},
		{"duplicate key, chat", "POST", g.gateway + "/v1/chat/completions", `{"model":"nano","model":"high","messages":[{"role":"user","content":"hi"}]}`, bearer(g.key), 400, "model"},
		{"nested duplicate key, chat", "POST", g.gateway + "/v1/chat/completions", `{"model":"auto","messages":[{"role":"user","content":"hi","role":"system"}]}`, bearer(g.key), 400, "messages[0].role"},
		{"duplicate key, messages", "POST", g.gateway + "/v1/messages", `{"model":"auto","max_tokens":5,"max_tokens":500000,"messages":[{"role":"user","content":"hi"}]}`, bearer(g.key), 400, "max_tokens"},
		{"duplicate key, responses", "POST", g.gateway + "/v1/responses", `{"model":"auto","input":"hi","input":"ho"}`, bearer(g.key), 400, "input"},
		{"echoed OpenAI assistant message", "POST", g.gateway + "/v1/chat/completions",
			`{"model":"auto","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello","refusal":null,"annotations":[],"audio":null,"x_client_note":"kept"},{"role":"user","content":"again"}]}`,
			bearer(g.key), 200, ""},
		{"echoed Anthropic assistant message", "POST", g.gateway + "/v1/messages",
			`{"model":"auto","max_tokens":50,"messages":[{"role":"user","content":"hi"},{"role":"assistant","id":"msg_1","content":[{"type":"text","text":"hello","citations":null},{"type":"tool_use","id":"toolu_1","name":"f","input":{},"caller":{"type":"direct"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok","is_error":false,"cache_control":{"type":"ephemeral"}}]}]}`,
			bearer(g.key), 200, ""},
	} {
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		resp, got := sendReq(t, c.method, c.url, body, c.headers)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d: %.300s", c.name, resp.StatusCode, c.status, got)
			continue
		}
		if c.field == "" {
			continue
		}
		var p struct {
			Error struct {
				Field string `json:"field"`
				Param string `json:"param"`
				Code  string `json:"code"`
				Type  string `json:"type"`
			} `json:"error"`
		}
		_ = json.Unmarshal(got, &p)
		if f := p.Error.Field + p.Error.Param; f != c.field {
			t.Errorf("%s: the error names %q, want %q: %s", c.name, f, c.field, got)
		}
	}
}
