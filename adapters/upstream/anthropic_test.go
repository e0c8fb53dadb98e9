package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/anthropic"
	"github.com/arr-dev/arr/domain/routing"
)

// anthropicClient is a client whose key variable K is "sk-ant-test".
func anthropicClient(t testing.TB, breakerFailures uint32) *upstream.Client {
	t.Helper()
	c, err := upstream.New(upstream.Config{Timeout: 5 * time.Second, StreamIdleTimeout: 5 * time.Second,
		BreakerFailures: breakerFailures, BreakerOpenFor: time.Minute,
		APIKey: func(env string) string {
			if env == "K" {
				return "sk-ant-test"
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func claude(srv *upstreamtest.Server, id string) routing.Model {
	return routing.Model{ID: id, Vendor: "anthropic", UpstreamModel: id, BaseURL: srv.URL, APIKeyEnv: "K"}
}

func messagesBody(model string, stream bool, extra string) []byte {
	s := `{"model":"` + model + `","max_tokens":64,"messages":[{"role":"user","content":"hi there"}]` + extra
	if stream {
		s += `,"stream":true`
	}
	return []byte(s + "}")
}

// A non-streamed Messages call: POST /messages with x-api-key and the
// default anthropic-version (no Authorization), the reply as it came (an
// SDK Message), its usage read.
func TestAnthropicMessage(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := anthropicClient(t, 5)
	resp, err := c.Do(context.Background(), claude(srv, "claude-a"), upstream.Request{API: upstream.APIAnthropic, Body: messagesBody("claude-a", false, "")})
	if err != nil {
		t.Fatal(err)
	}
	var msg sdk.Message
	if err := json.Unmarshal(resp.Data, &msg); err != nil || msg.Content[0].Text != "Hello from claude-a: hi there" {
		t.Fatalf("reply %s (%v)", resp.Data, err)
	}
	if resp.Usage == nil || resp.Usage.InputTokens != msg.Usage.InputTokens || resp.Usage.OutputTokens != 5 || resp.Stream != nil {
		t.Fatalf("usage %+v, the reply's %+v", resp.Usage, msg.Usage)
	}
	h := srv.LastHeaders("claude-a")
	if h.Get("X-Api-Key") != "sk-ant-test" || h.Get("Anthropic-Version") != anthropic.DefaultVersion || h.Get("Authorization") != "" || h.Get("Anthropic-Beta") != "" {
		t.Fatalf("headers %v", h)
	}
}

// The client's anthropic-version and anthropic-beta are passed on; a
// value that cannot be a header is refused as the API would (400) without
// a call.
func TestAnthropicHeadersPassedOn(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := anthropicClient(t, 1)
	m := claude(srv, "claude-h")
	// A beta field is accepted with a beta header.
	body := messagesBody("claude-h", false, `,"context_management":{"edits":[]}`)
	_, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIAnthropic, Body: body,
		AnthropicVersion: "2023-01-01", AnthropicBeta: []string{"prompt-caching-2024-07-31", "context-management-2025-06-27"}})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.LastHeaders("claude-h")
	if h.Get("Anthropic-Version") != "2023-01-01" || h.Get("Anthropic-Beta") != "prompt-caching-2024-07-31,context-management-2025-06-27" {
		t.Fatalf("headers %v", h)
	}
	_, err = c.Do(context.Background(), m, upstream.Request{API: upstream.APIAnthropic, Body: body, AnthropicBeta: []string{"a\r\nX-Evil: 1"}})
	var ue *upstream.Error
	if !errors.As(err, &ue) || ue.Retryable || ue.Status != 400 || ue.Type != anthropic.ErrorInvalidRequest {
		t.Fatalf("err = %v", err)
	}
	if n := srv.Calls("claude-h"); n != 1 {
		t.Fatalf("%d calls, want 1", n)
	}
	if st := c.BreakerStates()["claude-h"]; st != "closed" {
		t.Fatalf("breaker %s", st)
	}
}

// An API Do does not speak is a retryable failure, so failover goes on.
func TestUnsupportedAPI(t *testing.T) {
	srv := upstreamtest.Start(t)
	_, err := anthropicClient(t, 1).Do(context.Background(), claude(srv, "g"), upstream.Request{API: "cohere", Body: []byte(`{}`)})
	var ue *upstream.Error
	if !errors.Is(err, upstream.ErrUnsupportedAPI) || !errors.As(err, &ue) || !ue.Retryable {
		t.Fatalf("err = %v", err)
	}
}

// The stand-in counts prompt caching: the first request with a
// cache_control prefix writes it, the same prefix later is read, a longer
// one reads the cached part and writes the rest.
func TestAnthropicCachedTokens(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := anthropicClient(t, 5)
	m := claude(srv, "claude-c")
	system := `,"system":[{"type":"text","text":"` + strings.Repeat("You are a careful assistant. ", 40) + `","cache_control":{"type":"ephemeral"}}]`
	call := func(body string) anthropic.Usage {
		t.Helper()
		resp, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIAnthropic, Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		return *resp.Usage
	}
	first := call(string(messagesBody("claude-c", false, system)))
	if first.CacheCreationInputTokens < 250 || first.CacheReadInputTokens != 0 || first.InputTokens <= 0 {
		t.Fatalf("first call %+v", first)
	}
	second := call(string(messagesBody("claude-c", false, system)))
	if second.CacheReadInputTokens != first.CacheCreationInputTokens || second.CacheCreationInputTokens != 0 || second.InputTokens != first.InputTokens {
		t.Fatalf("second call %+v after %+v", second, first)
	}
	turn := `{"model":"claude-c","max_tokens":64` + system + `,"messages":[{"role":"user","content":"hi there"},` +
		`{"role":"assistant","content":"Hello"},{"role":"user","content":[{"type":"text","text":"and more","cache_control":{"type":"ephemeral"}}]}]}`
	third := call(turn)
	if third.CacheReadInputTokens != first.CacheCreationInputTokens || third.CacheCreationInputTokens <= 0 {
		t.Fatalf("third call %+v", third)
	}
	// The next turn marks only its own end (the earlier "and more" block
	// sent without its breakpoint, as Claude Code moves it): the
	// breakpoint looks back over the blocks before it and reads what the
	// third call cached.
	next := `{"model":"claude-c","max_tokens":64` + system + `,"messages":[{"role":"user","content":"hi there"},` +
		`{"role":"assistant","content":"Hello"},{"role":"user","content":[{"type":"text","text":"and more"}]},` +
		`{"role":"assistant","content":"Sure"},{"role":"user","content":[{"type":"text","text":"go on","cache_control":{"type":"ephemeral"}}]}]}`
	fourth := call(next)
	if fourth.CacheReadInputTokens != third.CacheReadInputTokens+third.CacheCreationInputTokens || fourth.CacheCreationInputTokens <= 0 {
		t.Fatalf("fourth call %+v after %+v", fourth, third)
	}
}

// readEvents reads a stream to its end, returning the event names and the
// error that ended it (nil: io.EOF).
func readEvents(t testing.TB, st *upstream.Stream) ([]string, error) {
	t.Helper()
	var names []string
	for range 10000 {
		ev, err := st.NextEvent()
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return names, err
		}
		if !strings.HasPrefix(string(ev.Raw), "event: "+ev.Name+"\n") || !strings.HasSuffix(string(ev.Raw), "\n\n") {
			t.Fatalf("raw event %q", ev.Raw)
		}
		names = append(names, ev.Name)
	}
	t.Fatal("the stream did not end")
	return nil, nil
}

// A streamed call: every event one by one with its raw bytes, through
// message_stop, then io.EOF; the usage of message_start and message_delta.
func TestAnthropicStream(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := anthropicClient(t, 5)
	resp, err := c.Do(context.Background(), claude(srv, "claude-s"), upstream.Request{API: upstream.APIAnthropic, Stream: true, Body: messagesBody("claude-s", true, "")})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	if err := resp.Stream.Peek(); err != nil {
		t.Fatal(err)
	}
	names, err := readEvents(t, resp.Stream)
	if err != nil {
		t.Fatal(err)
	}
	want := "message_start ping content_block_start" + strings.Repeat(" content_block_delta", 5) + " content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events %s", got)
	}
	if u := resp.Stream.Usage(); u.InputTokens <= 0 || u.OutputTokens != 5 {
		t.Fatalf("usage %+v", u)
	}
	if _, err := resp.Stream.NextEvent(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the end: %v", err)
	}
	if h := srv.LastHeaders("claude-s"); h.Get("Accept") != "text/event-stream" {
		t.Fatalf("headers %v", h)
	}
}

// A stream that ends before message_stop (broken off, or closed cleanly
// without it), one that sends an error event and one longer than a reply
// may be are cut: ErrCut, and the same error on every later call.
func TestAnthropicStreamCut(t *testing.T) {
	srv := upstreamtest.Start(t)
	c := anthropicClient(t, 5)
	for _, tc := range []struct {
		name  string
		b     upstreamtest.Behavior
		ab    upstreamtest.AnthropicBehavior
		check func(error) bool
	}{
		{"broken off", upstreamtest.Behavior{CutAfter: 2}, upstreamtest.AnthropicBehavior{}, nil},
		{"no message_stop", upstreamtest.Behavior{}, upstreamtest.AnthropicBehavior{NoStop: true}, nil},
		{"error event", upstreamtest.Behavior{}, upstreamtest.AnthropicBehavior{ErrorAfter: 1}, func(err error) bool {
			var ee *upstream.EventError
			return errors.As(err, &ee) && ee.Type == anthropic.ErrorOverloaded && strings.Contains(string(ee.Body), "Overloaded")
		}},
		{"huge delta", upstreamtest.Behavior{}, upstreamtest.AnthropicBehavior{HugeDelta: 33 << 20}, func(err error) bool {
			return errors.Is(err, upstream.ErrTooLarge)
		}},
		{"stalled", upstreamtest.Behavior{ChunkDelay: 10 * time.Second}, upstreamtest.AnthropicBehavior{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := "claude-cut-" + strings.ReplaceAll(tc.name, " ", "-")
			srv.Set(model, tc.b)
			srv.SetAnthropic(model, tc.ab)
			c := c
			if tc.name == "stalled" {
				var err error
				c, err = upstream.New(upstream.Config{Timeout: 5 * time.Second, StreamIdleTimeout: 200 * time.Millisecond, APIKey: func(string) string { return "k" }})
				if err != nil {
					t.Fatal(err)
				}
			}
			resp, err := c.Do(context.Background(), claude(srv, model), upstream.Request{API: upstream.APIAnthropic, Stream: true, Body: messagesBody(model, true, "")})
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Stream.Close()
			names, err := readEvents(t, resp.Stream)
			if !errors.Is(err, upstream.ErrCut) || tc.check != nil && !tc.check(err) {
				t.Fatalf("after %v: err = %v", names, err)
			}
			if _, again := resp.Stream.NextEvent(); !errors.Is(again, upstream.ErrCut) {
				t.Fatalf("the next call: %v", again)
			}
		})
	}
}

// A long delta within the bound is read whole.
func TestAnthropicStreamLongEvent(t *testing.T) {
	srv := upstreamtest.Start(t)
	srv.SetAnthropic("claude-long", upstreamtest.AnthropicBehavior{HugeDelta: 1 << 20})
	resp, err := anthropicClient(t, 5).Do(context.Background(), claude(srv, "claude-long"), upstream.Request{API: upstream.APIAnthropic, Stream: true, Body: messagesBody("claude-long", true, "")})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	var longest int
	for {
		ev, err := resp.Stream.NextEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		longest = max(longest, len(ev.Data))
	}
	if longest < 1<<20 {
		t.Fatalf("the longest event is %d bytes", longest)
	}
}
