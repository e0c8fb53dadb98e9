package upstream_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/anthropic"
	"github.com/arr-dev/arr/domain/routing"
)

// An Anthropic 4xx other than 401, 403, 404, 408 and 429 is the
// request's own: not retryable, its status, body and error type kept for
// the client, and however many there are the breaker stays closed. A 5xx,
// 529 (overloaded), 429, 408, or a 401, 403 or 404 (the operator's key or
// model id) is retryable and opens the breaker, which then refuses
// without a call.
func TestAnthropicErrors(t *testing.T) {
	srv := upstreamtest.Start(t)
	const failures = 3
	for _, tc := range []struct {
		status int
		typ    string
		retry  bool
	}{
		{400, anthropic.ErrorInvalidRequest, false},
		{403, anthropic.ErrorPermission, true},
		{404, anthropic.ErrorNotFound, true},
		{413, anthropic.ErrorRequestTooLarge, false},
		{408, anthropic.ErrorAPI, true},
		{429, anthropic.ErrorRateLimit, true},
		{500, anthropic.ErrorAPI, true},
		{503, anthropic.ErrorAPI, true},
		{529, anthropic.ErrorOverloaded, true},
	} {
		t.Run(http.StatusText(tc.status)+tc.typ, func(t *testing.T) {
			c := anthropicClient(t, failures)
			m := claude(srv, "claude-e"+tc.typ+http.StatusText(tc.status))
			srv.Set(m.UpstreamModel, upstreamtest.Behavior{Status: tc.status})
			for i := range failures + 1 {
				_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIAnthropic, Body: messagesBody(m.UpstreamModel, false, "")})
				var ue *upstream.Error
				if !errors.As(err, &ue) {
					t.Fatalf("call %d: err = %v", i, err)
				}
				if tc.retry && i == failures {
					if !errors.Is(err, upstream.ErrBreakerOpen) || !ue.Retryable {
						t.Fatalf("call %d: err = %v, want the breaker open", i, err)
					}
					break
				}
				body, ok := anthropic.ParseError(ue.Body)
				if ue.Status != tc.status || ue.Retryable != tc.retry || ue.Type != tc.typ || !ok || body.Error.Type != tc.typ {
					t.Fatalf("call %d: %+v (body %s)", i, ue, ue.Body)
				}
			}
			want, calls := "closed", failures+1
			if tc.retry {
				want, calls = "open", failures
			}
			if st := c.BreakerStates()[m.ID]; st != want {
				t.Fatalf("breaker %s, want %s", st, want)
			}
			if n := srv.Calls(m.UpstreamModel); n != calls {
				t.Fatalf("%d calls reached the upstream, want %d", n, calls)
			}
		})
	}
}

// The stand-in refuses what the API refuses: no x-api-key (401), no
// anthropic-version, an unknown field, a missing max_tokens (400). Through
// the client the 401 is the operator's (the key), retried elsewhere.
func TestAnthropicStandInRefuses(t *testing.T) {
	srv := upstreamtest.Start(t)
	keyless := routing.Model{ID: "claude-nokey", UpstreamModel: "claude-nokey", BaseURL: srv.URL}
	_, err := anthropicClient(t, 1).Do(context.Background(), keyless, upstream.Request{API: upstream.APIAnthropic, Body: messagesBody("claude-nokey", false, "")})
	var ue *upstream.Error
	if !errors.As(err, &ue) || ue.Status != 401 || !ue.Retryable || ue.Type != anthropic.ErrorAuthentication {
		t.Fatalf("err = %v", err)
	}
	for _, tc := range []struct {
		name    string
		headers map[string]string
		body    string
		status  int
	}{
		{"no version", map[string]string{"X-Api-Key": "k"}, string(messagesBody("m", false, "")), 400},
		{"no key", map[string]string{"Anthropic-Version": anthropic.DefaultVersion}, string(messagesBody("m", false, "")), 401},
		{"unknown field", map[string]string{"X-Api-Key": "k", "Anthropic-Version": anthropic.DefaultVersion}, string(messagesBody("m", false, `,"temperatur":1`)), 400},
		{"beta field without beta", map[string]string{"X-Api-Key": "k", "Anthropic-Version": anthropic.DefaultVersion}, string(messagesBody("m", false, `,"context_management":{}`)), 400},
		{"no max_tokens", map[string]string{"X-Api-Key": "k", "Anthropic-Version": anthropic.DefaultVersion}, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, 400},
		{"no messages", map[string]string{"X-Api-Key": "k", "Anthropic-Version": anthropic.DefaultVersion}, `{"model":"m","max_tokens":5,"messages":[]}`, 400},
		{"accepted", map[string]string{"X-Api-Key": "k", "Anthropic-Version": anthropic.DefaultVersion}, string(messagesBody("m", false, `,"temperature":0.5`)), 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/messages", bytes.NewReader([]byte(tc.body)))
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
}

// A 200 that is not a message with usage is a failed attempt (retryable):
// it cannot be relayed or billed.
func TestAnthropicUnreadableReply(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"type":"message","content":[]`))
	}))
	defer bad.Close()
	m := routing.Model{ID: "claude-bad", UpstreamModel: "claude-bad", BaseURL: bad.URL, APIKeyEnv: "K"}
	_, err := anthropicClient(t, 1).Do(context.Background(), m, upstream.Request{API: upstream.APIAnthropic, Body: messagesBody("claude-bad", false, "")})
	var ue *upstream.Error
	if !errors.Is(err, anthropic.ErrNoUsage) || !errors.As(err, &ue) || !ue.Retryable || ue.Status != 200 {
		t.Fatalf("err = %v", err)
	}
}
