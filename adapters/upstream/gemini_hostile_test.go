package upstream_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/translate/gemini"
	"github.com/arr-dev/arr/domain/routing"
)

// Hostile Gemini streams from a raw loopback server: an error event
// before anything is the request's 400 (kept, breaker closed) or the
// upstream's failure (retryable, counted) by its code, before the call
// counts as answered; an event that is not JSON, a body that ends before
// a finishing event, events after one, and a reply of the wrong type.
func TestGeminiHostileStreams(t *testing.T) {
	body := `{"contents":[{"role":"user","parts":[{"text":"x"}]}]}`
	for _, tc := range []struct {
		name, sse string
		status    int
		retryable bool
		cut       bool
	}{
		{"error first, the request's", "data: {\"error\":{\"code\":400,\"message\":\"bad schema\",\"status\":\"INVALID_ARGUMENT\"}}\r\n\r\n", 400, false, false},
		{"error first, the upstream's", "data: {\"error\":{\"code\":503,\"message\":\"overloaded\",\"status\":\"UNAVAILABLE\"}}\r\n\r\n", 200, true, false},
		{"not JSON", "data: {\"candidates\":[\r\n\r\n", 200, true, false},
		{"no finish", "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\r\n\r\n", 0, false, true},
		{"truncated event", "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\r\n\r\ndata: {\"candidates\":[{\"finishReason\":\"STOP\"}]}", 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := sseServer(t, tc.sse)
			c := geminiClient(t, 1, "")
			m := routing.Model{ID: "g-" + strings.ReplaceAll(tc.name, " ", "-"), Vendor: "google", UpstreamModel: "g", BaseURL: srv.URL, APIKeyEnv: "GK"}
			resp, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIGemini, Body: []byte(body), Stream: true})
			if tc.cut {
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Stream.Close()
				for range 10 {
					if _, err = resp.Stream.Next(); err != nil {
						break
					}
				}
				if !errors.Is(err, upstream.ErrCut) {
					t.Fatalf("read to the end: %v", err)
				}
				return
			}
			var ue *upstream.Error
			if !errors.As(err, &ue) || ue.Retryable != tc.retryable || ue.Status != tc.status {
				t.Fatalf("err = %v (%+v)", err, ue)
			}
			want := map[bool]string{true: "open", false: "closed"}[tc.retryable]
			if st := c.BreakerStates()[m.ID]; st != want {
				t.Fatalf("breaker %s, want %s", st, want)
			}
		})
	}
}

// Events after the finishing one are read; the stream ends with the body.
// A reply that is an event stream to a call that did not ask for one is
// the upstream's failure.
func TestGeminiStreamEnds(t *testing.T) {
	srv := sseServer(t, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n"+
		"data: {\"usageMetadata\":{\"promptTokenCount\":3}}\r\n\r\n")
	c := geminiClient(t, 5, "")
	m := routing.Model{ID: "g-end", Vendor: "google", UpstreamModel: "g", BaseURL: srv.URL, APIKeyEnv: "GK"}
	resp, err := c.Do(context.Background(), m, upstream.Request{API: upstream.APIGemini, Body: []byte(`{}`), Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Stream.Close()
	n := 0
	for ; n < 10; n++ {
		if _, err = resp.Stream.Next(); err != nil {
			break
		}
	}
	if n != 2 || err == nil || errors.Is(err, upstream.ErrCut) {
		t.Fatalf("%d events, then %v", n, err)
	}
	_, err = c.Do(context.Background(), m, upstream.Request{API: upstream.APIGemini, Body: []byte(`{}`)})
	var ue *upstream.Error
	if !errors.As(err, &ue) || !ue.Retryable {
		t.Fatalf("an event stream for a reply: %v", err)
	}
}

// A reply that is not Gemini's fails its translation (the caller's
// failed attempt), never a panic or an empty success.
func TestGeminiMalformedReply(t *testing.T) {
	for _, b := range []string{`not json`, `{"candidates":"x"}`, `{}`, `{"error":{"code":500,"message":"m"}}`, `[]`} {
		if out, err := gemini.CompletionBody([]byte(b), "m", 1); err == nil {
			t.Errorf("%s: %s", b, out)
		}
	}
}
