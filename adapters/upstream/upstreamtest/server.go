package upstreamtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/domain/wait"
)

// Behavior is how the server answers requests for one model.
type Behavior struct {
	// Latency is waited before the response headers.
	Latency time.Duration
	// Status, when not 0 or 200, is answered with an OpenAI error body.
	Status int
	// Hang waits until the client gives up, answering nothing.
	Hang bool
	// CutAfter, for streams, breaks the connection off after this many
	// content chunks (0: never).
	CutAfter int
	// ChunkDelay is waited between stream chunks.
	ChunkDelay time.Duration
	// OmitUsage leaves usage out of replies and streams.
	OmitUsage bool
	// CachedTokens is reported as the usage's
	// prompt_tokens_details.cached_tokens (of a reply and of a stream's
	// usage chunk), as OpenAI reports the prompt tokens it read from its
	// prompt cache: at most the prompt tokens. 0: no details.
	CachedTokens int
	// Dimensions is the length of the model's embeddings when the request
	// does not ask for one (0: the well-known model's, else 16).
	Dimensions int
}

// Server is the loopback upstream.
type Server struct {
	URL string // base URL, ending in /v1
	// BedrockURL is the Converse stand-in's base URL (bedrock.go): a
	// catalog model's base_url, under which /model/{id}/converse is.
	BedrockURL string

	srv *http.Server
	ln  net.Listener

	mu        sync.Mutex
	behaviors map[string]Behavior
	calls     map[string]int
	last      map[string]map[string]any
	auth      map[string]string
	parents   map[string]string
	// azure is the Azure OpenAI stand-in's last call per deployment
	// (azure.go).
	azure map[string]AzureCall
	// anth is the Messages stand-in's (anthropic.go).
	anth *anthropicServer
	// root is the base URL without /v1; gem and tok are the Gemini and
	// Vertex AI stand-ins' (gemini.go) and the OAuth2 token endpoint's
	// (token.go).
	root string
	gem  *geminiServer
	tok  *tokenServer
	// bedrock is the Converse stand-in's (bedrock.go).
	bedrock *bedrockServer
}

// Start starts a server for the test and closes it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := New("127.0.0.1:0")
	if err != nil {
		t.Fatalf("starting the test upstream: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// New starts a server listening on addr (a loopback address).
func New(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, URL: "http://" + ln.Addr().String() + "/v1",
		behaviors: map[string]Behavior{}, calls: map[string]int{}, last: map[string]map[string]any{}, auth: map[string]string{},
		parents: map[string]string{}, azure: map[string]AzureCall{}, anth: newAnthropicServer(), root: "http://" + ln.Addr().String(),
		gem: &geminiServer{behaviors: map[string]GeminiBehavior{}, headers: map[string]http.Header{}}, tok: newTokenServer(),
		bedrock: newBedrockServer()}
	s.BedrockURL = s.root
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1beta/models/{call}", s.geminiAPI)
	mux.HandleFunc("POST /v1/projects/{project}/locations/{location}/publishers/google/models/{call}", s.vertexAPI)
	mux.HandleFunc("POST /v1/projects/{project}/locations/{location}/publishers/anthropic/models/{call}", s.vertexAnthropic)
	mux.HandleFunc("POST /token", s.tok.token)
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/chat/completions", s.complete)
	mux.HandleFunc("POST /openai/deployments/{deployment}/chat/completions", s.azureChat)
	mux.HandleFunc("POST /v1/embeddings", s.embed)
	mux.HandleFunc("POST /model/{model}/converse", s.converse(false))
	mux.HandleFunc("POST /model/{model}/converse-stream", s.converse(true))
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[]}`)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
}

// Set sets the behavior for model ("" for every model without its own).
func (s *Server) Set(model string, b Behavior) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.behaviors[model] = b
}

// Reset forgets every behavior.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.behaviors = map[string]Behavior{}
	s.anth.reset()
	s.gem.mu.Lock()
	s.gem.behaviors = map[string]GeminiBehavior{}
	s.gem.mu.Unlock()
	s.bedrock.reset()
}

// Calls returns how many requests named model.
func (s *Server) Calls(model string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[model]
}

// LastRequest returns the last request body that named model.
func (s *Server) LastRequest(model string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last[model]
}

// LastAuthorization returns the Authorization header of the last request
// that named model.
func (s *Server) LastAuthorization(model string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auth[model]
}

// LastTraceparent returns the W3C traceparent header of the last request
// that named model ("" when it had none).
func (s *Server) LastTraceparent(model string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.parents[model]
}

func (s *Server) behavior(model string, req map[string]any, auth string) Behavior {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[model]++
	s.last[model] = req
	s.auth[model] = auth
	if b, ok := s.behaviors[model]; ok {
		return b
	}
	return s.behaviors[""]
}

// Request is the part of a chat request the server reads.
type Request struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	ParallelToolCalls *bool `json:"parallel_tool_calls"`
	ResponseFormat    *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
}

// injected plays b's injected latency, hang or failure status on a
// request for model (its error written by writeErr): true when the
// request is answered (or its client gone) and nothing more is to be
// written.
func (b Behavior) injected(w http.ResponseWriter, r *http.Request, model string, writeErr func(http.ResponseWriter, int, string)) bool {
	if b.Latency > 0 && !wait.Sleep(r.Context(), b.Latency) {
		return true
	}
	if b.Hang {
		<-r.Context().Done()
		return true
	}
	if b.Status != 0 && b.Status != http.StatusOK {
		writeErr(w, b.Status, fmt.Sprintf("injected failure of %s", model))
		return true
	}
	return false
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "param": nil, "code": nil}})
	_, _ = w.Write(b)
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var raw map[string]any
	var req Request
	if err := json.Unmarshal(body, &raw); err != nil {
		writeError(w, http.StatusBadRequest, "body is not JSON: "+err.Error())
		return
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("not a chat request: %v", err))
		return
	}
	s.mu.Lock()
	s.parents[req.Model] = r.Header.Get("Traceparent")
	s.mu.Unlock()
	b := s.behavior(req.Model, raw, r.Header.Get("Authorization"))
	if b.injected(w, r, req.Model, writeError) {
		return
	}
	rep := reply(req)
	if req.Stream {
		s.stream(w, r, req, rep, b)
		return
	}
	out := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"system_fingerprint": "fp_upstreamtest",
		"choices":            []any{map[string]any{"index": 0, "message": rep.message(), "logprobs": nil, "finish_reason": rep.finish}},
	}
	if !b.OmitUsage {
		out["usage"] = rep.usage(b)
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	_ = enc.Encode(out)
}

type toolCall struct {
	id, name, args string
}

type answer struct {
	content          string
	tools            []toolCall
	finish           string
	prompt, complete int
}

func (a answer) message() map[string]any {
	m := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if len(a.tools) == 0 {
		m["content"] = a.content
		return m
	}
	var calls []any
	for _, t := range a.tools {
		calls = append(calls, map[string]any{"id": t.id, "type": "function", "function": map[string]any{"name": t.name, "arguments": t.args}})
	}
	m["tool_calls"] = calls
	return m
}

func (a answer) usage(b Behavior) map[string]any {
	u := map[string]any{"prompt_tokens": a.prompt, "completion_tokens": a.complete, "total_tokens": a.prompt + a.complete}
	if b.CachedTokens > 0 {
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": min(b.CachedTokens, a.prompt), "audio_tokens": 0}
	}
	return u
}

func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

func reply(req Request) answer {
	var lastUser string
	var toolResults []string
	promptBytes := 0
	for _, m := range req.Messages {
		t := text(m.Content)
		promptBytes += len(t) + 16
		if m.Role == "user" {
			lastUser = t
		}
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "tool" {
		for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == "tool"; i-- {
			toolResults = append([]string{text(req.Messages[i].Content)}, toolResults...)
		}
	}
	if len(lastUser) > 200 {
		lastUser = lastUser[:200]
	}
	a := answer{finish: "stop", prompt: promptBytes/4 + 1}
	switch {
	case len(req.Tools) > 0 && last.Role != "tool":
		n := 1
		if len(req.Tools) > 1 && (req.ParallelToolCalls == nil || *req.ParallelToolCalls) {
			n = 2
		}
		for i := 0; i < n; i++ {
			args, _ := json.Marshal(map[string]string{"input": lastUser})
			a.tools = append(a.tools, toolCall{id: fmt.Sprintf("call_%d", i+1), name: req.Tools[i].Function.Name, args: string(args)})
		}
		a.finish = "tool_calls"
		a.complete = 10 * n
		return a
	case len(toolResults) > 0:
		a.content = "Tool results: " + strings.Join(toolResults, "; ")
	case req.ResponseFormat != nil && req.ResponseFormat.Type != "text":
		b, _ := json.Marshal(map[string]string{"model": req.Model, "echo": lastUser})
		a.content = string(b)
	default:
		a.content = "Hello from " + req.Model + ": " + lastUser
	}
	limit := -1
	if req.MaxTokens != nil {
		limit = *req.MaxTokens
	}
	if req.MaxCompletionTokens != nil {
		limit = *req.MaxCompletionTokens
	}
	words := strings.SplitAfter(a.content, " ")
	if limit >= 0 && len(words) > limit {
		a.content = strings.Join(words[:limit], "")
		a.finish = "length"
		words = words[:limit]
	}
	a.complete = len(words)
	return a
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, req Request, a answer, b Behavior) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, 500, "no flusher")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	created := time.Now().Unix()
	chunk := func(choices []any, usage any) {
		m := map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"system_fingerprint": "fp_upstreamtest", "choices": choices}
		if usage != nil {
			m["usage"] = usage
		} else if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
			m["usage"] = nil
		}
		data, _ := json.Marshal(m)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", data)
		fl.Flush()
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "logprobs": nil, "finish_reason": finish}}
	}
	sent := 0
	pause := func() bool {
		sent++
		if b.CutAfter > 0 && sent > b.CutAfter {
			panic(http.ErrAbortHandler) // breaks the connection off mid-stream
		}
		if b.ChunkDelay > 0 && !wait.Sleep(r.Context(), b.ChunkDelay) {
			return false
		}
		return true
	}
	chunk(delta(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil), nil)
	if len(a.tools) > 0 {
		for i, t := range a.tools {
			if !pause() {
				return
			}
			chunk(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": t.id, "type": "function",
				"function": map[string]any{"name": t.name, "arguments": ""}}}}, nil), nil)
			half := len(t.args) / 2
			for _, part := range []string{t.args[:half], t.args[half:]} {
				if !pause() {
					return
				}
				chunk(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": part}}}}, nil), nil)
			}
		}
	} else {
		for _, word := range strings.SplitAfter(a.content, " ") {
			if !pause() {
				return
			}
			chunk(delta(map[string]any{"content": word}, nil), nil)
		}
	}
	chunk(delta(map[string]any{}, a.finish), nil)
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage && !b.OmitUsage {
		chunk([]any{}, a.usage(b))
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	fl.Flush()
}
