package researchtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// LLM speaks the OpenAI chat-completion format (POST /v1/chat/completions).
// It answers planning prompts with a JSON array of sub-questions,
// rewrite prompts of a follow-up with the question whose first " it " is
// replaced by "the" and the latest user turn's words after its third
// ("When does the island ferry leave?" gives "the island ferry leave"),
// and answer prompts with a short answer whose sentences are the first
// sentences of the first three sources, each cited with its [n], plus one
// marker, [42], that refers to no source (the server must drop it).
//
// Asked with "stream": true it answers as server-sent events, one chunk
// per word, flushed one by one, then a usage chunk and [DONE]. With
// SetHold(true) a streamed answer stops after its first sentence and waits
// until the client cancels the request (at most 30 s), which Cancelled
// counts, or until Release.
type LLM struct {
	*httptest.Server
	hits      atomic.Int64
	streams   atomic.Int64
	cancelled atomic.Int64
	down      atomic.Bool
	hold      atomic.Bool
	mu        sync.Mutex
	release   chan struct{}
	// Held is sent on (without blocking) when a held stream has sent its
	// first word.
	Held chan struct{}
}

// NewLLM starts the model; its base URL for clients is URL+"/v1".
func NewLLM(t Cleaner) *LLM {
	l := &LLM{Held: make(chan struct{}, 1), release: make(chan struct{})}
	l.Server = httptest.NewServer(http.HandlerFunc(l.serve))
	t.Cleanup(l.Close)
	return l
}

// Hits is how many completions were requested.
func (l *LLM) Hits() int64 { return l.hits.Load() }

// Streams is how many of the completions asked for a stream.
func (l *LLM) Streams() int64 { return l.streams.Load() }

// Cancelled is how many held streams their client cancelled.
func (l *LLM) Cancelled() int64 { return l.cancelled.Load() }

// SetHold makes streamed answers stop after their first word until the
// client cancels (true), or run to the end again.
func (l *LLM) SetHold(hold bool) { l.hold.Store(hold) }

// Release lets the streams held now go on to their end.
func (l *LLM) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.release)
	l.release = make(chan struct{})
}

// SetDown makes every completion fail with 503 (true) or work again.
func (l *LLM) SetDown(down bool) { l.down.Store(down) }

// BaseURL is the OpenAI base URL of the model.
func (l *LLM) BaseURL() string { return l.URL + "/v1" }

var sourceHead = regexp.MustCompile(`(?m)^\[(\d+)\] .*\n(.*)$`)

func (l *LLM) serve(w http.ResponseWriter, r *http.Request) {
	l.hits.Add(1)
	w.Header().Set("Content-Type", "application/json")
	if l.down.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"message":"all upstreams down","type":"server_error","code":"unavailable"}}`))
		return
	}
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role, Content string
		} `json:"messages"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) < 2 {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"bad request","type":"invalid_request_error"}}`))
		return
	}
	system, user := req.Messages[0].Content, req.Messages[len(req.Messages)-1].Content
	var content string
	if strings.Contains(system, "rewrite the last question") {
		// A follow-up's rewrite: the question with "it" replaced by "the"
		// and the latest user turn's words after its third.
		_, last, _ := strings.Cut(user, "Last question: ")
		subject := ""
		for _, line := range strings.Split(user, "\n") {
			if rest, ok := strings.CutPrefix(line, "user: "); ok {
				if f := strings.Fields(strings.TrimRight(rest, "?")); len(f) > 2 {
					subject = "the " + strings.Join(f[3:], " ")
				}
			}
		}
		content = strings.Replace(last, " it ", " "+subject+" ", 1)
	} else if strings.Contains(system, "plan web research") {
		content = `["what causes spring tides", "neap tides sun moon right angles", "moon orbit gravity bulge"]`
	} else {
		var parts []string
		for i, m := range sourceHead.FindAllStringSubmatch(user, 3) {
			first, _, _ := strings.Cut(m[2], ". ")
			parts = append(parts, fmt.Sprintf("%s [%s].", strings.TrimSuffix(first, "."), m[1]))
			if i == 0 {
				parts = append(parts, "This is also confirmed elsewhere [42].")
			}
		}
		content = strings.Join(parts, " ")
		if content == "" {
			content = "The sources do not answer this."
		}
	}
	pt, ct := int64(len(system+user)/4), int64(len(content)/4)
	if req.Stream {
		l.stream(w, r, content, pt, ct)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-standin", "object": "chat.completion", "model": "standin-mid",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]any{"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
		"routing": map[string]any{"tier": "mid", "model": "standin-mid", "cost_per_1k": 0.002},
	})
}

// stream answers content as server-sent events, one chunk per word.
func (l *LLM) stream(w http.ResponseWriter, r *http.Request, content string, pt, ct int64) {
	l.streams.Add(1)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk := func(text string) map[string]any {
		return map[string]any{"id": "chatcmpl-standin", "object": "chat.completion.chunk", "model": "standin-mid",
			"choices": []map[string]any{{"index": 0, "delta": map[string]any{"content": text}}}}
	}
	words := strings.SplitAfter(content, " ")
	// A held stream stops after its first sentence: the answer service
	// relays a model's text a checked sentence at a time.
	holdAt := 0
	for i, w := range words {
		if strings.HasSuffix(strings.TrimSpace(w), ".") {
			holdAt = i
			break
		}
	}
	for i, word := range words {
		send(chunk(word))
		if i == holdAt && l.hold.Load() {
			l.mu.Lock()
			release := l.release
			l.mu.Unlock()
			select {
			case l.Held <- struct{}{}:
			default:
			}
			select {
			case <-r.Context().Done():
				l.cancelled.Add(1)
				return
			case <-release:
				continue
			case <-time.After(30 * time.Second):
				return
			}
		}
	}
	send(map[string]any{"id": "chatcmpl-standin", "object": "chat.completion.chunk", "model": "standin-mid", "choices": []any{},
		"usage":   map[string]any{"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
		"routing": map[string]any{"tier": "mid", "model": "standin-mid", "cost_per_1k": 0.002}})
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
}
