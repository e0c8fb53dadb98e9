package main_test

import (
	"strings"
	"testing"
)

// TestGatewayWithoutUpstreamSaysHowToConfigureOne: on a fresh arr up with
// no upstream and no provider key, a completion and an embedding are 502
// with a message that says how to give the gateway an upstream, not
// "retry shortly".
func TestGatewayWithoutUpstreamSaysHowToConfigureOne(t *testing.T) {
	e := newEnv(t)
	e.extraEnv = []string{"ARR_UPSTREAM_BASE_URL=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "GEMINI_API_KEY=", "MISTRAL_API_KEY="}
	e.up()
	e.createAccount("fresh@example.com", "free")
	k := e.mint("fresh@example.com", "gateway")
	h := map[string]string{"Authorization": "Bearer " + k.Secret}
	for _, c := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"auto","messages":[{"role":"user","content":"Say hello."}]}`},
		{"/v1/embeddings", `{"model":"embed-small","input":"hello"}`},
	} {
		code, body := postJSON(t, e.gateway+c.path, []byte(c.body), h)
		msg, _ := body["error"].(map[string]any)["message"].(string)
		if code != 502 || !strings.Contains(msg, "no upstream is configured") || !strings.Contains(msg, "ARR_UPSTREAM_BASE_URL") ||
			!strings.Contains(msg, "OPENAI_API_KEY is unset") || strings.Contains(msg, "retry shortly") {
			t.Errorf("%s with no upstream: %d %v", c.path, code, body)
		}
	}
}
