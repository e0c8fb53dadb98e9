package messages_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/gateway/dialect"
	"github.com/arr-dev/arr/readapi/gateway/messages"
)

// TestOnlyAnthropicTakesWhatChatCannot: a Messages request with what the
// chat translation does not serve (a server tool and its blocks, a
// top-level field arr does not read, mcp_servers) parses for Anthropic
// models only: the exchange names the translation's refusal, and its chat
// request keeps the rest (to size and route it). A request the
// translation serves names none; a malformed one is refused either way.
func TestOnlyAnthropicTakesWhatChatCannot(t *testing.T) {
	cases := []struct {
		name     string
		body     string
		onlyCode string // "" : any model
		errCode  string // a refusal of the request itself
	}{
		{name: "translatable", body: `{"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`},
		{name: "server tool", onlyCode: "unsupported_value",
			body: `{"max_tokens":5,"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":2},{"name":"get","input_schema":{"type":"object"}}],
			"tool_choice":{"type":"tool","name":"web_search"},
			"messages":[{"role":"user","content":"find it"},
			 {"role":"assistant","content":[{"type":"server_tool_use","id":"srv1","name":"web_search","input":{"query":"x"}},{"type":"web_search_tool_result","tool_use_id":"srv1","content":[]},{"type":"text","text":"found"}]},
			 {"role":"user","content":[{"type":"search_result","source":"s","title":"t","content":[]},{"type":"text","text":"more"}]}]}`},
		{name: "unknown field", onlyCode: "unknown_field", body: `{"max_tokens":5,"messages":[{"role":"user","content":"hi"}],"speed":"fast"}`},
		{name: "mcp servers", onlyCode: "unsupported_value", body: `{"max_tokens":5,"messages":[{"role":"user","content":"hi"}],"mcp_servers":[{"type":"url","url":"http://127.0.0.1:9/mcp","name":"m"}]}`},
		{name: "malformed still refused", errCode: "missing_max_tokens", body: `{"messages":[{"role":"user","content":"hi"}],"speed":"fast"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := messages.Dialect{}.Parse([]byte(tc.body))
			if tc.errCode != "" {
				var de *domain.Error
				if !errors.As(err, &de) || de.Code != tc.errCode {
					t.Fatalf("err %v, want %s", err, tc.errCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			api, drop, only := ex.(dialect.Passthrough).Native()
			if api != "anthropic" || strings.Join(drop, ",") != "quality_floor,max_cost_usd,brand_pref" {
				t.Fatalf("Native %s %v", api, drop)
			}
			var de *domain.Error
			switch {
			case tc.onlyCode == "" && only != nil:
				t.Fatalf("a translatable request is for Anthropic only: %v", only)
			case tc.onlyCode != "" && (!errors.As(only, &de) || de.Code != tc.onlyCode):
				t.Fatalf("only %v, want %s", only, tc.onlyCode)
			}
			chat, err := ex.Chat()
			var m map[string]any
			if err != nil || json.Unmarshal(chat, &m) != nil || len(m["messages"].([]any)) == 0 {
				t.Fatalf("chat %s %v", chat, err)
			}
			if tc.name == "server tool" && (len(m["tools"].([]any)) != 1 || m["tool_choice"] != nil) {
				t.Fatalf("the server tool went into the chat request: %s", chat)
			}
		})
	}
}

// TestCountTokensOfWhatOnlyAnthropicTakes: count_tokens sizes a request
// with a server tool or an unknown field without them, as it is routed.
func TestCountTokensOfWhatOnlyAnthropicTakes(t *testing.T) {
	for _, body := range []string{
		`{"model":"x","tools":[{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":"x"}]}`,
		`{"model":"x","messages":[{"role":"user","content":"x"}],"frobnicate":1}`,
	} {
		if _, err := messages.ParseCountRequest([]byte(body)); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	if _, err := messages.ParseCountRequest([]byte(`{"model":"x"}`)); err == nil {
		t.Error("a request without messages counted")
	}
}
