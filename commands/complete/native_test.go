package complete_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/routing"
)

// nativeHarness is a harness whose mid tier is one Claude model reached
// through the Messages API at the stand-in.
func nativeHarness(t *testing.T, baseURL string) *harness {
	t.Helper()
	return newHarness(t, options{startChain: true, complete: func(cfg *complete.Config) {
		base := cfg.Catalog.Models()[0].BaseURL
		if baseURL != "" {
			base = baseURL
		}
		cat, err := routing.ParseCatalog([]byte(`{"tiers":[{"name":"mid","models":[{"id":"claude-mid","vendor":"anthropic","api":"anthropic",
		  "upstream_model":"claude-sonnet-4-0","api_key_env":"K","base_url":"` + base + `","input_usd_per_1k":0.003,"output_usd_per_1k":0.015,
		  "cached_input_usd_per_1k":0.0003,"cache_write_usd_per_1k":0.00375,"quality":0.92,"context_window":200000}]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		up, err := upstream.New(upstream.Config{Timeout: 2 * time.Second, StreamIdleTimeout: 2 * time.Second,
			APIKey: func(string) string { return "sk-test" }})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Catalog, cfg.Upstream = cat, up
	}})
}

// messagesRequest is a streamed Messages request as the route builds it:
// its chat translation, and its own body for Anthropic models.
func messagesRequest(t *testing.T, text string) *complete.Request {
	t.Helper()
	r := request(t, text, map[string]any{"model": "mid", "stream": true})
	body := `{"model":"mid","max_tokens":256,"stream":true,"quality_floor":0.5,"messages":[{"role":"user","content":` + string(mustJSON(t, text)) + `}]}`
	r.Body = []byte(body)
	r.Native = &complete.Native{API: routing.APIAnthropic, Body: r.Body, Drop: []string{"quality_floor"}}
	r.APIs = []string{routing.APIAnthropic}
	return r
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNativeStream: a pass-through stream is the upstream's events as
// they came, but for message_delta and message_stop, held for End; its
// usage is the upstream's. Cut short by an error event, it is billed for
// the text relayed (estimated, as the upstream's output count never came)
// and End carries the upstream's error event.
func TestNativeStream(t *testing.T) {
	hs := nativeHarness(t, "")
	res, err := hs.complete(t, messagesRequest(t, "stream natively"), complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stream
	if st == nil || !st.Native() {
		t.Fatalf("not a pass-through stream: %+v", res)
	}
	var names []string
	for i := 0; i < 1000; i++ {
		raw, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(raw, []byte("event: ")) || !bytes.HasSuffix(raw, []byte("\n\n")) {
			t.Fatalf("not a raw event: %q", raw)
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(string(raw), "event: "), "\n")
		names = append(names, name)
	}
	st.Close()
	end := st.End()
	if names[0] != "message_start" || strings.Contains(strings.Join(names, ","), "message_delta") || strings.Contains(strings.Join(names, ","), "message_stop") {
		t.Fatalf("events relayed: %v", names)
	}
	if !bytes.Contains(end.Delta, []byte(`"stop_reason":"end_turn"`)) || !bytes.HasPrefix(end.Stop, []byte("event: message_stop")) || end.Cut != nil {
		t.Fatalf("end: delta %s stop %q cut %v", end.Delta, end.Stop, end.Cut)
	}
	es := hs.entries(t)
	if len(es) != 1 || es[0].Completion.Model != "claude-mid" || es[0].Completion.UsageEstimated || es[0].Completion.CompletionTokens != end.Usage.Completion || end.Usage.Completion < 2 {
		t.Fatalf("entries %+v, end usage %+v", es, end.Usage)
	}

	hs.up.SetAnthropic("claude-sonnet-4-0", upstreamtest.AnthropicBehavior{ErrorAfter: 3})
	res, err = hs.complete(t, messagesRequest(t, strings.Repeat("a longer reply to cut ", 20)), complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		if _, err := res.Stream.Next(); err != nil {
			break
		}
	}
	res.Stream.Close()
	end = res.Stream.End()
	es = hs.entries(t)
	c := es[len(es)-1].Completion
	if end.Cut == nil || !bytes.Contains(end.UpstreamError, []byte("overloaded_error")) || c.Outcome != "cut" || !c.UsageEstimated || c.CompletionTokens < 3 {
		t.Fatalf("cut: end %+v, payload %+v", end, c)
	}
}

// TestNativeStreamPingAfterDelta: a ping between message_delta and
// message_stop is sent on while the delta is held; another event there
// sends the delta out first, and End has it again for the routing
// object (the last one, whose usage is cumulative), never a made-up one.
func TestNativeStreamPingAfterDelta(t *testing.T) {
	script := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-0\",\"content\":[],\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"get\",\"input\":{}}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":7}}\n\n" +
		"event: ping\ndata: {\"type\":\"ping\"}\n\n" +
		"event: other\ndata: {\"type\":\"other\"}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, script)
	}))
	defer srv.Close()
	hs := nativeHarness(t, srv.URL+"/v1")
	res, err := hs.complete(t, messagesRequest(t, "tool please"), complete.CacheAuto)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := 0; i < 100; i++ {
		raw, err := res.Stream.Next()
		if err != nil {
			break
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(string(raw), "event: "), "\n")
		names = append(names, name)
	}
	res.Stream.Close()
	end := res.Stream.End()
	if got := strings.Join(names, ","); got != "message_start,content_block_start,content_block_stop,ping,message_delta,other" {
		t.Fatalf("relayed %s", got)
	}
	if !bytes.Contains(end.Delta, []byte(`"stop_reason":"tool_use"`)) || end.Usage.Completion != 7 || end.Usage.Prompt != 9 {
		t.Fatalf("end delta %s usage %+v", end.Delta, end.Usage)
	}
}
