package upstream_test

// Attacks on the Anthropic Messages upstream (issue 40). Each test fails
// while the weakness it names is there.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/routing"
)

// rawClaude is a catalog model on a raw loopback server.
func rawClaude(url, id string) routing.Model {
	return routing.Model{ID: id, Vendor: "anthropic", UpstreamModel: id, BaseURL: url, APIKeyEnv: "K"}
}

// sseServer answers every POST with 200 and the SSE text body.
func sseServer(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A base URL that redirects (a compromised or misconfigured upstream, an
// open redirect on a proxy in front of it) makes the client re-send the
// operator's x-api-key to whatever host the Location names: net/http
// strips Authorization on a redirect to another host, but not X-Api-Key,
// and the Client follows redirects.
func TestAttackRedirectLeaksAnthropicKey(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal("127.0.0.2 (loopback, 127.0.0.0/8) cannot be listened on:", err)
	}
	var mu sync.Mutex
	var leaked []string
	thief := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		io.WriteString(w, `{"type":"message","usage":{"input_tokens":1,"output_tokens":1}}`)
	})}}
	thief.Start()
	t.Cleanup(thief.Close)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(front.Close)
	c := anthropicClient(t, 5)
	_, _ = c.Do(context.Background(), rawClaude(front.URL, "claude-redir"), upstream.Request{API: upstream.APIAnthropic, Body: messagesBody("claude-redir", false, "")})
	mu.Lock()
	defer mu.Unlock()
	for _, k := range leaked {
		if k != "" {
			t.Fatalf("the operator's key %q was sent to %s after a redirect", k, thief.URL)
		}
	}
	if len(leaked) > 0 {
		t.Fatalf("the request (the client's prompt) was re-posted to %s after a redirect", thief.URL)
	}
}

// A client that gives up before the headers (a short deadline, or hanging
// up) is a retryable failure the model's breaker counts: a caller with a
// key opens a model's breaker for every tenant with BreakerFailures
// requests it cancels, without the upstream failing at all.
func TestAttackClientCancelOpensBreaker(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	c := anthropicClient(t, 2)
	m := rawClaude(srv.URL, "claude-cancel")
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := c.Do(ctx, m, upstream.Request{API: upstream.APIAnthropic, Stream: true, Body: messagesBody("claude-cancel", true, "")})
		cancel()
		if err == nil {
			t.Fatal("a call canceled before its headers succeeded")
		}
	}
	if s := c.BreakerStates()["claude-cancel"]; s != "closed" {
		t.Fatalf("two client-canceled calls left the breaker %s", s)
	}
}

// Do sends Body as it is and trusts r.Stream to agree with it. A body
// with "stream" twice (a reader where the first key wins says false, the
// upstream's decoder, last key wins, says true) gets an SSE reply to a
// non-streamed call: a retryable "200 without usage" the breaker counts,
// so a client opens the model's breaker with bodies of its own. Do does
// not look at the reply's Content-Type to tell a mismatch from a broken
// upstream.
func TestAttackStreamFlagMismatchOpensBreaker(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := anthropicClient(t, 2)
	m := claude(srv, "claude-dup")
	body := []byte(`{"stream":false,"model":"claude-dup","max_tokens":8,"messages":[{"role":"user","content":"x"}],"stream":true}`)
	for range 2 {
		_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIAnthropic, Stream: false, Body: body})
		var ue *upstream.Error
		if errors.As(err, &ue) && ue.Retryable {
			t.Logf("counted failure: %v", err)
		}
	}
	if s := c.BreakerStates()["claude-dup"]; s == "open" {
		t.Fatalf("two client bodies the gateway read as non-streamed opened the breaker (%s)", s)
	}
}

// Anthropic reports overload of a stream that has begun as a 200 whose
// first event is an overloaded_error. Peek fails (the caller fails over)
// but the breaker already counted the call a success at the headers, so
// it never opens however overloaded the model is.
func TestAttackStreamOverloadNeverOpensBreaker(t *testing.T) {
	srv := sseServer(t, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")
	c := anthropicClient(t, 2)
	m := rawClaude(srv.URL, "claude-over")
	for range 3 {
		resp, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIAnthropic, Stream: true, Body: messagesBody("claude-over", true, "")})
		if err != nil {
			continue // the failed start is the call's failure
		}
		if err := resp.Stream.Peek(); err == nil {
			t.Fatal("an overloaded_error event was not an error")
		}
		resp.Stream.Close()
	}
	if s := c.BreakerStates()["claude-over"]; s != "open" {
		t.Fatalf("three overloaded streams in a row: breaker %s", s)
	}
}

// Usage counts an upstream sends are taken as they are: negative ones
// (a credit for the caller who is billed by them), and ones whose sum
// overflows int64 (PromptTokens negative).
func TestAttackImplausibleUsageAccepted(t *testing.T) {
	for _, tc := range []struct{ name, usage string }{
		{"negative", `{"input_tokens":-1000000,"output_tokens":-5}`},
		{"overflowing", `{"input_tokens":9223372036854775807,"output_tokens":1,"cache_read_input_tokens":9223372036854775807}`},
	} {
		t.Run(tc.name+" reply", func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, `{"type":"message","role":"assistant","content":[],"usage":`+tc.usage+`}`)
			}))
			t.Cleanup(srv.Close)
			resp, err := anthropicClient(t, 5).Do(context.Background(), rawClaude(srv.URL, "claude-u"), upstream.Request{API: upstream.APIAnthropic, Body: messagesBody("claude-u", false, "")})
			if err == nil {
				t.Fatalf("usage %+v (prompt %d) accepted", *resp.Usage, resp.Usage.PromptTokens())
			}
		})
		t.Run(tc.name+" stream", func(t *testing.T) {
			srv := sseServer(t, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":"+tc.usage+"}}\n\n"+
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":-7}}\n\n"+
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
			resp, err := anthropicClient(t, 5).Do(context.Background(), rawClaude(srv.URL, "claude-u"), upstream.Request{API: upstream.APIAnthropic, Stream: true, Body: messagesBody("claude-u", true, "")})
			if err != nil {
				return // refused at its first event
			}
			defer resp.Stream.Close()
			if _, err := readEvents(t, resp.Stream); err == nil {
				u := resp.Stream.Usage()
				t.Fatalf("stream usage %+v (prompt %d) accepted", u, u.PromptTokens())
			}
		})
	}
}

// A non-streamed 200 without usage is a failed attempt, but a stream with
// no message_start and no message_delta that reaches message_stop is a
// complete stream with zero usage: the whole answer delivered, nothing to
// bill.
func TestAttackStreamWithoutUsageCompletes(t *testing.T) {
	srv := sseServer(t, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""+strings.Repeat("free ", 1000)+"\"}}\n\n"+
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"+
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	resp, err := anthropicClient(t, 5).Do(context.Background(), rawClaude(srv.URL, "claude-free"), upstream.Request{API: upstream.APIAnthropic, Stream: true, Body: messagesBody("claude-free", true, "")})
	if err != nil {
		return // refused at its first event
	}
	defer resp.Stream.Close()
	names, err := readEvents(t, resp.Stream)
	if err == nil {
		t.Fatalf("events %v ended cleanly with usage %+v", names, resp.Stream.Usage())
	}
}

// An upstream 401/403/404 is the operator's fault (a revoked or mistyped
// key, a catalog upstream_model the provider does not have), not the
// client's: yet it is kept "for the client" (not retryable, its body
// passed on, never counted), so no failover, no open breaker, and the
// client is told its own request is unauthenticated or names no model.
func TestAttackOperatorFaultKeptForClient(t *testing.T) {
	for _, tc := range []struct {
		status int
		typ    string
	}{{401, "authentication_error"}, {403, "permission_error"}, {404, "not_found_error"}} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, `{"type":"error","error":{"type":"`+tc.typ+`","message":"upstream says no to sk-ant-test"}}`)
			}))
			t.Cleanup(srv.Close)
			c := anthropicClient(t, 2)
			m := rawClaude(srv.URL, "claude-op")
			var err error
			for range 2 {
				_, err = c.Do(context.Background(), m, upstream.Request{API: upstream.APIAnthropic, Body: messagesBody("claude-op", false, "")})
			}
			var ue *upstream.Error
			if !errors.As(err, &ue) || !ue.Retryable {
				t.Fatalf("%v: not retryable, body for the client %s, breaker %s", err, ue.Body, c.BreakerStates()["claude-op"])
			}
		})
	}
}

// The 32 MiB bound is on the bytes read, not on the memory a stream
// takes: one long event is gathered line by line (doubling), then copied
// again into Raw and again into Data, about 7 times its size allocated
// and 3 times kept while the stream lives. An upstream sending 30 MiB
// events to a few dozen streams at once takes gigabytes.
func TestAttackLongEventMemory(t *testing.T) {
	const size = 30 << 20
	srv := sseServer(t, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"+
		"event: content_block_delta\ndata: {\"delta\":{\"text\":\""+strings.Repeat("a", size)+"\"}}\n\nevent: message_stop\ndata: {}\n\n")
	c := anthropicClient(t, 5)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp, err := c.Do(context.Background(), rawClaude(srv.URL, "claude-mem"), upstream.Request{API: upstream.APIAnthropic, Stream: true, Body: messagesBody("claude-mem", true, "")})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	if ev, err := resp.Stream.NextEvent(); err != nil || ev.Name != "message_start" {
		t.Fatalf("first event %q, %v", ev.Name, err)
	}
	ev, err := resp.Stream.NextEvent()
	runtime.ReadMemStats(&after)
	if err != nil || len(ev.Data) < size {
		t.Fatalf("%d bytes, %v", len(ev.Data), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*size {
		t.Fatalf("reading one %d MiB event allocated %d MiB", size>>20, alloc>>20)
	}
}
