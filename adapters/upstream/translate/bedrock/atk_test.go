package bedrock_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream/translate/bedrock"
	"github.com/arr-dev/arr/domain/routing"
)

// "stop": null is how many clients say "no stop sequences" (OpenAI's
// API takes it). ReadChat reads null as the single stop string "", so
// Converse is sent stopSequences [""], which it refuses (a stop
// sequence has at least one character): the client's ordinary body
// becomes a 400.
func TestAtkReadChatStopNull(t *testing.T) {
	r, err := bedrock.ReadChat([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":null}`))
	if err != nil {
		t.Fatal(err)
	}
	conv, _, err := bedrock.FromChat(&r, bedrock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ic := conv.InferenceConfig; ic != nil {
		for _, s := range ic.StopSequences {
			if s == "" {
				t.Fatalf("stop null became stopSequences %q", ic.StopSequences)
			}
		}
	}
}

// Each count within MaxTokenCount passes Usage.check, but their sum (the
// prompt) may not: Tokens() then clamps the prompt and drops what does
// not fit from the cache writes, the dearest tokens, so the usage that
// is billed is less than the usage that was accepted.
func TestAtkUsageSumBeyondBoundRefused(t *testing.T) {
	reply := []byte(`{"output":{"message":{"role":"assistant","content":[{"text":"x"}]}},"stopReason":"end_turn",` +
		`"usage":{"inputTokens":1099511627776,"outputTokens":1,"cacheReadInputTokens":1099511627776,"cacheWriteInputTokens":1099511627776}}`)
	res, err := bedrock.ToChat(reply, bedrock.Plan{}, bedrock.Meta{ID: "x", Model: "m"})
	if errors.Is(err, bedrock.ErrMalformed) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	u := *res.Usage
	tok := u.Tokens()
	if tok.CacheWrite != u.CacheWriteInputTokens || tok.Prompt != u.PromptTokens() {
		t.Fatalf("accepted usage %+v is billed as %+v (prompt over %d): cache writes dropped", u, tok, int64(routing.MaxTokenCount))
	}
}

// toolUseID is what Converse takes as a toolUseId.
var toolUseID = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// A conversation whose earlier turn another upstream answered holds tool
// call ids Converse refuses (toolUseId is [a-zA-Z0-9_-]{1,64}): arr's
// own Gemini translation makes "call_<hex>__thought__<base64 thought
// signature>" (hundreds of characters, with + / =), Kimi's are
// "functions.get_weather:0". The tool names are checked, the ids passed
// on as they are, so Bedrock answers a chat history arr itself produced
// with a 400. The ids must be mapped (one to one: two ids must not
// collide) onto what Converse takes.
func TestAtkToolUseIDsConverseTakes(t *testing.T) {
	gemini := "call_0123456789abcdef01234567" + "__thought__" + strings.Repeat("CiQB0e2Kb+Xq/9sA", 12) + "=="
	ids := []string{gemini, "functions.get_weather:0", "functions.get_weather:1"}
	body := `{"model":"m","messages":[{"role":"user","content":"weather?"},{"role":"assistant","content":null,"tool_calls":[`
	for i, id := range ids {
		if i > 0 {
			body += ","
		}
		body += `{"id":"` + id + `","type":"function","function":{"name":"get_weather","arguments":"{}"}}`
	}
	body += `]}`
	for _, id := range ids {
		body += `,{"role":"tool","tool_call_id":"` + id + `","content":"sunny"}`
	}
	body += `],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`
	r, err := bedrock.ReadChat([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	conv, _, err := bedrock.FromChat(&r, bedrock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	uses, results := map[string]bool{}, map[string]bool{}
	for _, m := range conv.Messages {
		for _, b := range m.Content {
			switch {
			case b.ToolUse != nil:
				uses[b.ToolUse.ToolUseID] = true
			case b.ToolResult != nil:
				results[b.ToolResult.ToolUseID] = true
			}
		}
	}
	if len(uses) != len(ids) || len(results) != len(ids) {
		t.Fatalf("%d tool uses and %d results for %d distinct ids", len(uses), len(results), len(ids))
	}
	for id := range uses {
		if !toolUseID.MatchString(id) || !results[id] {
			t.Fatalf("toolUseId %q is not one Converse takes (or has no result)", id)
		}
	}
}
