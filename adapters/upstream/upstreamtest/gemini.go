package upstreamtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"google.golang.org/genai"
)

// GeminiBehavior is what the Gemini and Vertex AI stand-ins do besides a
// model's Behavior (whose Latency, Status, Hang, CutAfter, ChunkDelay and
// CachedTokens they honour too).
type GeminiBehavior struct {
	// ErrorAfter, for streams, sends an error event (503 UNAVAILABLE)
	// after this many text events and ends the stream (0: never).
	ErrorAfter int
	// NoFinish, for streams, ends the stream without a finishReason.
	NoFinish bool
	// ErrorStatus, with Behavior.Status, is the Google status named in
	// the error body (default: the status's canonical code).
	ErrorStatus string
	// ErrorReason is the error body's ErrorInfo reason (API_KEY_INVALID).
	ErrorReason string
}

// geminiServer is the Gemini stand-ins' state.
type geminiServer struct {
	mu        sync.Mutex
	key       string
	behaviors map[string]GeminiBehavior
	headers   map[string]http.Header
}

// GeminiURL is the base URL of the Gemini API stand-in (…/v1beta); the
// Vertex AI stand-in's is URL (…/v1).
func (s *Server) GeminiURL() string { return s.root + "/v1beta" }

// SetGeminiKey sets the API key the Gemini stand-in accepts ("": any
// key).
func (s *Server) SetGeminiKey(key string) {
	s.gem.mu.Lock()
	defer s.gem.mu.Unlock()
	s.gem.key = key
}

// SetGemini sets the Gemini behavior of model ("" for every model
// without its own).
func (s *Server) SetGemini(model string, b GeminiBehavior) {
	s.gem.mu.Lock()
	defer s.gem.mu.Unlock()
	s.gem.behaviors[model] = b
}

// LastGeminiHeaders returns the headers of the last Gemini or Vertex AI
// request for model (nil: none).
func (s *Server) LastGeminiHeaders(model string) http.Header {
	s.gem.mu.Lock()
	defer s.gem.mu.Unlock()
	return s.gem.headers[model]
}

// googleStatuses are the canonical codes of the statuses the stand-ins
// answer.
var googleStatuses = map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}

// googleError is Google's error body.
func googleError(status int, msg, code, reason string) []byte {
	if code == "" {
		code = googleStatuses[status]
		if code == "" {
			code = "UNKNOWN"
		}
	}
	e := map[string]any{"code": status, "message": msg, "status": code}
	if reason != "" {
		e["details"] = []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "googleapis.com"}}
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return b
}

func writeGoogleError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(googleError(status, msg, "", ""))
}

// geminiRequest is a GenerateContentRequest, of the SDK's types.
type geminiRequest struct {
	Contents          []*genai.Content        `json:"contents"`
	SystemInstruction *genai.Content          `json:"systemInstruction,omitempty"`
	Tools             []*genai.Tool           `json:"tools,omitempty"`
	ToolConfig        *genai.ToolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *genai.GenerationConfig `json:"generationConfig,omitempty"`
	SafetySettings    []*genai.SafetySetting  `json:"safetySettings,omitempty"`
	CachedContent     string                  `json:"cachedContent,omitempty"`
}

// geminiAPI answers POST /v1beta/models/{call}: the Gemini API, keyed by
// x-goog-api-key (none: 403; another than SetGeminiKey's: 400
// API_KEY_INVALID).
func (s *Server) geminiAPI(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("X-Goog-Api-Key")
	s.gem.mu.Lock()
	want := s.gem.key
	s.gem.mu.Unlock()
	switch {
	case key == "":
		writeGoogleError(w, http.StatusForbidden, "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.")
	case want != "" && key != want:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(googleError(400, "API key not valid. Please pass a valid API key.", "", "API_KEY_INVALID"))
	default:
		s.generate(w, r, r.PathValue("call"), key)
	}
}

// vertexAPI answers POST /v1/projects/{p}/locations/{l}/publishers/google/models/{call}:
// Vertex AI, authorized by an access token the token endpoint granted
// (none or another: 401 UNAUTHENTICATED).
func (s *Server) vertexAPI(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !s.tok.validToken(tok) {
		writeGoogleError(w, http.StatusUnauthorized, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
		return
	}
	s.generate(w, r, r.PathValue("call"), r.Header.Get("Authorization"))
}

// generate answers a generateContent or streamGenerateContent?alt=sse
// call ("{model}:{method}"): the body is decoded with the SDK's types,
// unknown fields refused (400), as is a request without contents or
// whose function calls and responses do not pair up.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, call, auth string) {
	model, method, _ := strings.Cut(call, ":")
	stream := method == "streamGenerateContent"
	if method != "generateContent" && !stream || stream && r.URL.Query().Get("alt") != "sse" {
		writeGoogleError(w, http.StatusNotFound, fmt.Sprintf("method %q (alt %q) is not served here", method, r.URL.Query().Get("alt")))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeGoogleError(w, http.StatusBadRequest, err.Error())
		return
	}
	var req geminiRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeGoogleError(w, http.StatusBadRequest, "Invalid JSON payload received. "+err.Error())
		return
	}
	if err := req.check(); err != nil {
		writeGoogleError(w, http.StatusBadRequest, err.Error())
		return
	}
	var raw map[string]any
	_ = json.Unmarshal(body, &raw)
	s.mu.Lock()
	s.parents[model] = r.Header.Get("Traceparent")
	s.mu.Unlock()
	s.gem.mu.Lock()
	s.gem.headers[model] = r.Header.Clone()
	gb, ok := s.gem.behaviors[model]
	if !ok {
		gb = s.gem.behaviors[""]
	}
	s.gem.mu.Unlock()
	b := s.behavior(model, raw, auth)
	writeErr := func(w http.ResponseWriter, status int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(googleError(status, msg, gb.ErrorStatus, gb.ErrorReason))
	}
	if b.injected(w, r, model, writeErr) {
		return
	}
	a := req.answer(model)
	if stream {
		s.geminiStream(w, r, a, b, gb)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(a.response(b, a.finish, a.parts(), true))
}
