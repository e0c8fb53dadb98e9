package main_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// anthropicAnswer is one answer of POST /v1/messages.
type anthropicAnswer struct {
	status  int
	header  http.Header
	errType string
	body    string
}

// postMessages sends one Messages API request with the key in x-api-key,
// as Anthropic's SDKs do.
func postMessages(t *testing.T, base, key, model, text string) anthropicAnswer {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"model": model, "max_tokens": 64, "messages": []map[string]any{{"role": "user", "content": text}}})
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", bytes.NewReader(b))
	req.Header.Set("x-api-key", key)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("POST %s/v1/messages: %v", base, err)
		return anthropicAnswer{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := anthropicAnswer{status: resp.StatusCode, header: resp.Header, body: string(raw)}
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if resp.StatusCode != http.StatusOK && json.Unmarshal(raw, &e) == nil && e.Type == "error" {
		a.errType = e.Error.Type
	}
	return a
}

// TestKeyLimitsOnMessagesAndEmbeddings: the key limits hold on every route
// that spends, not only chat and Responses: the Messages API (in
// Anthropic's error shape) and embeddings refuse a model outside the
// key's models, count against its rpm across both gateway processes, and
// a refusal reaches no upstream.
func TestKeyLimitsOnMessagesAndEmbeddings(t *testing.T) {
	g := newLimitedGateway(t)

	nano := g.mintLimited(t, "--models", "nano")
	if a := postMessages(t, g.gateway, nano.Secret, "claude-opus-4-1", "which tier?"); a.status != 403 || a.errType != "permission_error" ||
		!strings.Contains(a.body, "model_not_allowed") {
		t.Fatalf("a nano key asking /v1/messages for an opus alias: %d %s", a.status, a.body)
	}
	if a := postMessages(t, g.second, nano.Secret, "auto", "which tier?"); a.status != 200 || !strings.Contains(a.body, `"tier":"nano"`) {
		t.Fatalf("a nano key asking /v1/messages for auto: %d %s", a.status, a.body)
	}
	if e := postKeyed(t, g.gateway+"/v1/embeddings", nano.Secret, map[string]any{"model": "embed-small", "input": "hello"}); e.status != 403 || e.code != "model_not_allowed" {
		t.Fatalf("a nano key asking for embeddings: %d %s", e.status, e.body)
	}
	if n := g.up.Calls("text-embedding-3-small") + g.up.Calls("mistral-embed"); n != 0 {
		t.Fatalf("refused embeddings reached an upstream %d times", n)
	}

	embedOnly := g.mintLimited(t, "--models", "embed-small", "--rpm", "1")
	g.startOfMinute(t, 0)
	if e := postKeyed(t, g.second+"/v1/embeddings", embedOnly.Secret, map[string]any{"model": "auto", "input": []string{"a", "b"}}); e.status != 200 ||
		e.header.Get("x-ratelimit-limit-requests") != "1" || e.header.Get("x-ratelimit-remaining-requests") != "0" {
		t.Fatalf("the first embeddings request of an rpm-1 key: %d %v %s", e.status, e.header, e.body)
	}
	if e := postKeyed(t, g.gateway+"/v1/embeddings", embedOnly.Secret, map[string]any{"model": "embed-small", "input": "c"}); e.status != 429 ||
		e.code != "rate_limit_exceeded" || e.header.Get("Retry-After") == "" {
		t.Fatalf("the second embeddings request of an rpm-1 key, on the other process: %d %v %s", e.status, e.header, e.body)
	}
	if a := post(t, http.DefaultClient, g.gateway, embedOnly.Secret, map[string]any{"model": "high", "messages": userMsg("hi")}, false); a.status != 403 {
		t.Fatalf("an embeddings-only key asking chat for high: %d %s", a.status, a.body)
	}

	// Five concurrent Messages requests of an rpm-2 key, across both
	// processes: exactly two answers.
	rpm2 := g.mintLimited(t, "--rpm", "2")
	g.startOfMinute(t, 1)
	answers := make([]anthropicAnswer, 5)
	var wg sync.WaitGroup
	for i := range answers {
		base := g.gateway
		if i%2 == 1 {
			base = g.second
		}
		wg.Add(1)
		go func() { defer wg.Done(); answers[i] = postMessages(t, base, rpm2.Secret, "nano", "count me") }()
	}
	wg.Wait()
	ok, limited := 0, 0
	for _, a := range answers {
		switch {
		case a.status == 200:
			ok++
		case a.status == 429 && a.errType == "rate_limit_error" && strings.Contains(a.body, "rate_limit_exceeded") && a.header.Get("Retry-After") != "":
			limited++
		default:
			t.Errorf("an rpm-2 Messages request: %d %s", a.status, a.body)
		}
		if a.header.Get("x-ratelimit-limit-requests") != "2" {
			t.Errorf("a Messages answer of an rpm-2 key without x-ratelimit-limit-requests: 2: %v", a.header)
		}
	}
	if ok != 2 || limited != 3 {
		t.Fatalf("5 concurrent Messages requests of an rpm-2 key: %d answered, %d limited; want 2 and 3", ok, limited)
	}
}
