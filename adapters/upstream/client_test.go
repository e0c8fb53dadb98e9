package upstream_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/routing"
)

// A model whose required API-key variable is empty is skipped without a
// call (and failover goes on: the error is retryable); with the key set,
// or when the key is optional, the call goes out with it.
func TestModelWithoutItsRequiredKeyIsNotCalled(t *testing.T) {
	srv := upstreamtest.Start(t)
	keys := map[string]string{"SET_KEY": "sk-set"}
	c, err := upstream.New(upstream.Config{
		Timeout: 5 * time.Second, StreamIdleTimeout: 5 * time.Second,
		APIKey:      func(env string) string { return keys[env] },
		KeyRequired: func(env string) bool { return env != "OPTIONAL_KEY" },
	})
	if err != nil {
		t.Fatal(err)
	}
	body := func(model string) []byte {
		return []byte(`{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]}`)
	}
	unset := routing.Model{ID: "unset", UpstreamModel: "unset", BaseURL: srv.URL, APIKeyEnv: "UNSET_KEY"}
	_, err = c.Complete(context.Background(), unset, body("unset"), false)
	var ue *upstream.Error
	if !errors.Is(err, upstream.ErrNotConfigured) || !errors.As(err, &ue) || !ue.Retryable {
		t.Fatalf("err = %v, want a retryable ErrNotConfigured", err)
	}
	if n := srv.Calls("unset"); n != 0 {
		t.Fatalf("the upstream got %d calls for a model without its key", n)
	}
	for _, m := range []routing.Model{
		{ID: "set", UpstreamModel: "set", BaseURL: srv.URL, APIKeyEnv: "SET_KEY"},
		{ID: "optional", UpstreamModel: "optional", BaseURL: srv.URL, APIKeyEnv: "OPTIONAL_KEY"},
	} {
		resp, err := c.Complete(context.Background(), m, body(m.ID), false)
		if err != nil || resp.Status != 200 {
			t.Fatalf("%s: %v", m.ID, err)
		}
	}
	if got := srv.LastAuthorization("set"); got != "Bearer sk-set" {
		t.Fatalf("Authorization = %q", got)
	}
}

// An OpenAI-compatible upstream's 401, 403 and 404 are the operator's (a
// revoked key, missing rights, a catalog upstream_model it does not
// have), as they are for Anthropic: retryable, so failover goes on and the
// breaker counts them, and never the client's answer. A 400 stays the
// client's.
func TestOpenAIOperatorFaultIsRetried(t *testing.T) {
	srv := upstreamtest.Start(t)
	c, err := upstream.New(upstream.Config{Timeout: 5 * time.Second, StreamIdleTimeout: 5 * time.Second,
		BreakerFailures: 2, BreakerOpenFor: time.Minute, APIKey: func(string) string { return "sk-test" }})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		status    int
		retryable bool
	}{{401, true}, {403, true}, {404, true}, {400, false}, {422, false}} {
		id := "op-" + strconv.Itoa(tc.status)
		srv.Set(id, upstreamtest.Behavior{Status: tc.status})
		m := routing.Model{ID: id, UpstreamModel: id, BaseURL: srv.URL, APIKeyEnv: "K"}
		_, err := c.Complete(context.Background(), m, []byte(`{"model":"`+id+`","messages":[{"role":"user","content":"hi"}]}`), false)
		var ue *upstream.Error
		if !errors.As(err, &ue) || ue.Status != tc.status || ue.Retryable != tc.retryable {
			t.Fatalf("%d: %v (retryable %v), want retryable %v", tc.status, err, ue != nil && ue.Retryable, tc.retryable)
		}
	}
}

// An OpenAI chat stream's event is at most the longest reply (32 MiB): an
// upstream's endless line cuts the stream with ErrTooLarge once that much
// is gathered, instead of growing without end; events under it pass.
func TestOpenAIStreamEventBounded(t *testing.T) {
	long := strings.Repeat("a", 33<<20)
	srv := sseServer(t, "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {\"x\":\""+long+"\"}\n\ndata: [DONE]\n\n")
	c, err := upstream.New(upstream.Config{Timeout: 5 * time.Second, StreamIdleTimeout: 5 * time.Second, APIKey: func(string) string { return "k" }})
	if err != nil {
		t.Fatal(err)
	}
	m := routing.Model{ID: "long", UpstreamModel: "long", BaseURL: srv.URL, APIKeyEnv: "K"}
	resp, err := c.Complete(context.Background(), m, []byte(`{"model":"long","stream":true,"messages":[{"role":"user","content":"hi"}]}`), true)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	if d, err := resp.Stream.Next(); err != nil || !strings.Contains(string(d), "hi") {
		t.Fatalf("first event %q, %v", d, err)
	}
	if d, err := resp.Stream.Next(); !errors.Is(err, upstream.ErrTooLarge) || !errors.Is(err, upstream.ErrCut) {
		t.Fatalf("a 33 MiB event: %d bytes, %v; want ErrTooLarge and ErrCut", len(d), err)
	}
}
