package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/llm"
	"github.com/arr-dev/arr/domain"
)

// TestStream: a streamed completion asks with stream:true and
// include_usage, relays each chunk's content as it comes, and returns the
// whole completion with its usage and cost; a server that answers one
// JSON body, an error status, a chunk that reports an error or a stream
// cut before [DONE] are handled as Complete handles failures (an error
// wrapping domain.ErrUnavailable).
func TestStream(t *testing.T) {
	type wireAsk struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	asks := make(chan wireAsk, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a wireAsk
		_ = json.NewDecoder(r.Body).Decode(&a)
		asks <- a
		if r.Header.Get("Accept") != "text/event-stream" {
			t.Errorf("Accept %q", r.Header.Get("Accept"))
		}
		// The path is /MODE/v1/chat/completions.
		mode := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/v1/chat/completions")
		switch mode {
		case "json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"model":"m","choices":[{"message":{"content":"whole answer"}}],"usage":{"prompt_tokens":4,"completion_tokens":2}}`)
			return
		case "status":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"message":"all upstreams down"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for _, word := range []string{"Tides ", "rise ", "[1]."} {
			fmt.Fprintf(w, "data: {\"model\":\"standin\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", word)
			fl.Flush()
		}
		switch mode {
		case "chunk-error":
			_, _ = io.WriteString(w, "data: {\"error\":{\"message\":\"upstream failed mid-stream\"}}\n\n")
			return
		case "cut":
			return
		}
		_, _ = io.WriteString(w, ": a comment\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":900,\"total_tokens\":1000},\"routing\":{\"cost_per_1k\":0.002}}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	tests := []struct {
		name    string
		mode    string
		deltas  []string
		content string
		cost    int64
		fails   string
	}{
		{"stream", "stream", []string{"Tides ", "rise ", "[1]."}, "Tides rise [1].", 2000, ""},
		{"one JSON body", "json", []string{"whole answer"}, "whole answer", 0, ""},
		{"error status", "status", nil, "", 0, "status 503: all upstreams down"},
		{"error chunk", "chunk-error", []string{"Tides ", "rise ", "[1]."}, "", 0, "upstream failed mid-stream"},
		{"cut before [DONE]", "cut", []string{"Tides ", "rise ", "[1]."}, "", 0, "ended before [DONE]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := llm.New(llm.Config{BaseURL: srv.URL + "/" + strings.ReplaceAll(tc.mode, " ", "-") + "/v1"})
			if err != nil {
				t.Fatal(err)
			}
			var deltas []string
			resp, err := c.Stream(context.Background(), llm.Request{Model: "auto", Messages: []llm.Message{{Role: "user", Content: "q"}}},
				func(s string) { deltas = append(deltas, s) })
			asked := <-asks
			if !asked.Stream || !asked.StreamOptions.IncludeUsage {
				t.Fatalf("asked %+v", asked)
			}
			if strings.Join(deltas, "|") != strings.Join(tc.deltas, "|") {
				t.Fatalf("deltas %q, want %q", deltas, tc.deltas)
			}
			if tc.fails != "" {
				if err == nil || !errors.Is(err, domain.ErrUnavailable) || !strings.Contains(err.Error(), tc.fails) {
					t.Fatalf("err %v, want unavailable: %s", err, tc.fails)
				}
				return
			}
			if err != nil || resp.Content != tc.content || resp.CostMicroUSD != tc.cost {
				t.Fatalf("%+v %v", resp, err)
			}
		})
	}
}

// TestStreamCancelled: cancelling the context ends a stream the server
// holds open, with the context's error.
func TestStreamCancelled(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"first\"}}]}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}))
	defer srv.Close()
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = c.Stream(ctx, llm.Request{Model: "auto"}, func(string) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not see the request cancelled")
	}
}
