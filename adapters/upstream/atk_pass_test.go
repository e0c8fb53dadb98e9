package upstream_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/domain/routing"
)

// TestAtkPassAzureEntraUnsetSendsNoCredential: an azure_openai model
// authorized by an Entra ID token (credentials_env, no api_key_env) whose
// variable is unset is still called: the client's prompt goes to the
// resource with no credential at all, the 401 counts against the model's
// breaker, and a run with the token forgotten opens it, instead of the
// model being skipped as not configured, as an unset api_key_env is.
func TestAtkPassAzureEntraUnsetSendsNoCredential(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") == "" && r.Header.Get("Api-Key") == "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	c, err := upstream.New(upstream.Config{Timeout: 5 * time.Second, StreamIdleTimeout: 5 * time.Second,
		APIKey: func(string) string { return "" }, KeyRequired: func(string) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	m := routing.Model{ID: "az", UpstreamModel: "gpt-4o", BaseURL: srv.URL, API: routing.APIAzureOpenAI,
		APIVersion: "2024-10-21", Deployment: "gpt4o-prod", CredentialsEnv: "AZ_TOKEN"}
	_, err = c.Do(context.Background(), m, upstream.Request{API: upstream.APIAzureOpenAI,
		Body: []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"a secret prompt"}]}`)})
	if n := calls.Load(); n != 0 || !errors.Is(err, upstream.ErrNotConfigured) {
		t.Fatalf("%d calls without a credential; err %v (want ErrNotConfigured, no call)", n, err)
	}
}

// TestAtkPassPingBeforeOverloadIsAnswered: an Anthropic stream counts as
// answered at its first event so that an overloaded_error there fails
// over and counts against the breaker; a ping is read as that first
// event. An upstream (or the proxy in front of it) that sends a ping
// before its overloaded_error is answered: the client's stream fails
// mid-way instead of going to the next model, and the breaker never
// opens however overloaded the model is.
func TestAtkPassPingBeforeOverloadIsAnswered(t *testing.T) {
	srv := sseServer(t, "event: ping\ndata: {\"type\":\"ping\"}\n\n"+
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")
	c := anthropicClient(t, 2)
	m := rawClaude(srv.URL, "claude-over")
	answered := 0
	for range 3 {
		resp, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIAnthropic, Stream: true, Body: messagesBody("claude-over", true, "")})
		if err == nil {
			answered++
			resp.Stream.Close()
		}
	}
	if s := c.BreakerStates()["claude-over"]; answered > 0 || s != "open" {
		t.Fatalf("%d of 3 overloaded streams answered (no failover); breaker %s", answered, s)
	}
}
