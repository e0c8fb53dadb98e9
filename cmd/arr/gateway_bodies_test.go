package main_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
)

// TestBodiesInFlightAreBounded: with ARR_GATEWAY_BODIES_MB=12 and
// ARR_GATEWAY_ACCOUNT_BODIES_MB=6, twelve concurrent 2.6 MB /v1/messages
// bodies of three accounts, held by a slow upstream, are admitted four at
// most (two per account at most); the others wait ARR_GATEWAY_BODY_WAIT and
// are refused (their bodies read and dropped), in Anthropic's shape with
// Retry-After: 429 rate_limit_error account_bodies_in_flight for an
// account over its bytes, 529 overloaded_error bodies_in_flight for a full process; a
// chat completion then gets OpenAI's 503 service_unavailable_error. Once
// the admitted requests end their bytes are given back.
func TestBodiesInFlightAreBounded(t *testing.T) {
	g := newGateway(t, "enterprise", "ARR_GATEWAY_BODIES_MB=12", "ARR_GATEWAY_ACCOUNT_BODIES_MB=6", "ARR_GATEWAY_BODY_WAIT=500ms", "ARR_UPSTREAM_TIMEOUT=20s")
	// The bound is per account (its keys share it): three accounts.
	for _, email := range []string{"bodies-b@example.com", "bodies-c@example.com", "bodies-d@example.com"} {
		g.createAccount(email, "enterprise")
	}
	keys := []string{g.key, g.mint("bodies-b@example.com", "gateway").Secret, g.mint("bodies-c@example.com", "gateway").Secret}
	fresh := g.mint("bodies-d@example.com", "gateway").Secret
	text := strings.Repeat("lighthouse ", 236000) // 2.6 MB: about 865k prompt tokens, within gpt-4.1-nano's context
	msg, _ := json.Marshal(map[string]any{"model": "gpt-4.1-nano", "max_tokens": 16, "messages": []any{map[string]any{"role": "user", "content": text}}})
	chat, _ := json.Marshal(map[string]any{"model": "gpt-4.1-nano", "max_tokens": 16, "messages": userMsg(text)})
	type answer struct {
		key            int
		status         int
		typ, code      string
		retry, message string
	}
	send := func(path, key string, body []byte) answer {
		req, _ := http.NewRequest(http.MethodPost, g.gateway+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-key", key)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("POST %s: %v", path, err)
			return answer{}
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var e struct {
			Error struct{ Type, Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		return answer{status: resp.StatusCode, typ: e.Error.Type, code: e.Error.Code, retry: resp.Header.Get("Retry-After"), message: e.Error.Message}
	}

	g.up.Set("", upstreamtest.Behavior{Latency: 5 * time.Second})
	as := make([]answer, 12)
	var wg sync.WaitGroup
	for i := range as {
		wg.Add(1)
		go func() {
			defer wg.Done()
			as[i] = send("/v1/messages", keys[i%3], msg)
			as[i].key = i % 3
		}()
	}
	// While the admitted four are held: a chat completion of a fourth key.
	time.Sleep(2 * time.Second)
	full := send("/v1/chat/completions", fresh, chat)
	wg.Wait()

	answered, perKey, keyFull, processFull := 0, map[int]int{}, 0, 0
	for _, a := range as {
		switch {
		case a.status == 200:
			answered++
			perKey[a.key]++
		case a.status == 429 && a.typ == "rate_limit_error" && a.code == "account_bodies_in_flight" && a.retry != "":
			keyFull++
		case a.status == 529 && a.typ == "overloaded_error" && a.code == "bodies_in_flight" && a.retry != "":
			processFull++
		default:
			t.Errorf("an answer that is none of 200, 429 account_bodies_in_flight and 529 bodies_in_flight with Retry-After: %+v", a)
		}
	}
	t.Logf("12 concurrent 2.6 MB bodies: %d answered %v, %d refused for the key, %d for the process; then chat: %+v", answered, perKey, keyFull, processFull, full)
	// Bodies are charged as their bytes arrive, so which bound fills
	// first (the process's or an account's) depends on how the twelve
	// interleave; every request not answered is refused by one of them.
	if answered != 4 || keyFull+processFull != 8 {
		t.Fatalf("%d answered, %d refused for the account, %d for the process; want 4 answered (12 MiB of 2.6 MB bodies), 8 refused", answered, keyFull, processFull)
	}
	for k, n := range perKey {
		if n > 2 {
			t.Fatalf("account %d had %d bodies in flight; its limit (6 MiB) holds 2", k, n)
		}
	}
	if full.status != 503 || full.typ != "service_unavailable_error" || full.code != "bodies_in_flight" || full.retry == "" ||
		!strings.Contains(full.message, "ARR_GATEWAY_BODIES_MB") {
		t.Fatalf("a chat completion while the process is full: %+v; want 503 service_unavailable_error bodies_in_flight with Retry-After", full)
	}
	// The bytes were given back.
	g.up.Set("", upstreamtest.Behavior{})
	if a := send("/v1/messages", fresh, msg); a.status != 200 {
		t.Fatalf("a body after the others ended: %+v", a)
	}
}
