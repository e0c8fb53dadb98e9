package upstreamtest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/arr-dev/arr/domain/anthropic"
)

// AnthropicBehavior is what the Messages stand-in does besides a model's
// Behavior (whose Latency, Status, Hang, CutAfter and ChunkDelay it
// honours too).
type AnthropicBehavior struct {
	// ErrorAfter, for streams, sends an overloaded_error event after this
	// many text deltas and ends the stream (0: never).
	ErrorAfter int
	// NoStop, for streams, ends the stream cleanly without message_stop.
	NoStop bool
	// HugeDelta, for streams, sends one text delta of this many bytes
	// first (0: none).
	HugeDelta int
}

// anthropicServer is the Messages stand-in's state.
type anthropicServer struct {
	mu        sync.Mutex
	behaviors map[string]AnthropicBehavior
	headers   map[string]http.Header
	bodies    map[string][]byte
	// prefixes are the cached prefixes, by model and hash.
	prefixes map[string]bool
}

func newAnthropicServer() *anthropicServer {
	return &anthropicServer{behaviors: map[string]AnthropicBehavior{}, headers: map[string]http.Header{}, bodies: map[string][]byte{}, prefixes: map[string]bool{}}
}

func (a *anthropicServer) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.behaviors = map[string]AnthropicBehavior{}
}

// SetAnthropic sets the Messages behavior of model ("" for every model
// without its own).
func (s *Server) SetAnthropic(model string, b AnthropicBehavior) {
	s.anth.mu.Lock()
	defer s.anth.mu.Unlock()
	s.anth.behaviors[model] = b
}

// LastHeaders returns the headers of the last Messages request that named
// model (nil: none).
func (s *Server) LastHeaders(model string) http.Header {
	s.anth.mu.Lock()
	defer s.anth.mu.Unlock()
	return s.anth.headers[model]
}

// LastBody returns the body of the last Messages request that named
// model, byte for byte as it arrived (nil: none).
func (s *Server) LastBody(model string) []byte {
	s.anth.mu.Lock()
	defer s.anth.mu.Unlock()
	return s.anth.bodies[model]
}

// anthropicErrorTypes are the error kinds of the statuses the stand-in
// answers.
var anthropicErrorTypes = map[int]string{
	400: anthropic.ErrorInvalidRequest, 401: anthropic.ErrorAuthentication, 403: anthropic.ErrorPermission,
	404: anthropic.ErrorNotFound, 413: anthropic.ErrorRequestTooLarge, 429: anthropic.ErrorRateLimit,
	500: anthropic.ErrorAPI, anthropic.StatusOverloaded: anthropic.ErrorOverloaded,
}

func writeAnthropicError(w http.ResponseWriter, status int, msg string) {
	typ, ok := anthropicErrorTypes[status]
	if !ok {
		typ = anthropic.ErrorAPI
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(anthropic.NewError(typ, msg))
}

// messages answers POST /v1/messages as Anthropic's API does: a request
// without x-api-key is a 401, without anthropic-version a 400, a body the
// SDK's MessageNewParams cannot read or with fields it does not have (the
// beta ones too with anthropic-beta) a 400.
func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Api-Key") == "" {
		writeAnthropicError(w, http.StatusUnauthorized, "x-api-key header is required")
		return
	}
	if r.Header.Get("Anthropic-Version") == "" {
		writeAnthropicError(w, http.StatusBadRequest, "anthropic-version: header is required")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeAnthropicError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.message(w, r, body)
}

// message answers a Messages request's body.
func (s *Server) message(w http.ResponseWriter, r *http.Request, body []byte) {
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		writeAnthropicError(w, http.StatusBadRequest, "body is not JSON: "+err.Error())
		return
	}
	p, err := decodeMessageParams(body, raw, r.Header.Get("Anthropic-Beta") != "")
	if err != nil {
		writeAnthropicError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.mu.Lock()
	s.parents[p.Model] = r.Header.Get("Traceparent")
	s.mu.Unlock()
	s.anth.mu.Lock()
	s.anth.headers[p.Model] = r.Header.Clone()
	s.anth.bodies[p.Model] = body
	ab := s.anth.behaviors[p.Model]
	if _, ok := s.anth.behaviors[p.Model]; !ok {
		ab = s.anth.behaviors[""]
	}
	s.anth.mu.Unlock()
	b := s.behavior(p.Model, raw, "")
	if b.injected(w, r, p.Model, writeAnthropicError) {
		return
	}
	a := s.anthropicAnswer(p)
	if stream, _ := raw["stream"].(bool); stream {
		s.anthropicStream(w, r, a, b, ab)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(a.message())
}

// legacyFields are the request's fields that v2 of the SDK no longer has
// but clients still send (the sampling settings v1 had, deprecated by the
// API), and stream, which the SDK sets itself.
var legacyFields = map[string]bool{"stream": true, "temperature": true, "top_k": true, "top_p": true}

// decodeMessageParams reads body with the SDK's types, refusing a field
// they do not have (legacyFields aside) and a request without model,
// max_tokens or messages.
func decodeMessageParams(body []byte, raw map[string]any, beta bool) (sdk.MessageNewParams, error) {
	known := jsonFields(reflect.TypeFor[sdk.MessageNewParams]())
	if beta {
		for k := range jsonFields(reflect.TypeFor[sdk.BetaMessageNewParams]()) {
			known[k] = true
		}
	}
	for k := range raw {
		if !known[k] && !legacyFields[k] {
			return sdk.MessageNewParams{}, fmt.Errorf("%s: Extra inputs are not permitted", k)
		}
	}
	var p sdk.MessageNewParams
	if err := p.UnmarshalJSON(normalizeShorthand(raw)); err != nil {
		return p, fmt.Errorf("not a Messages request: %v", err)
	}
	switch {
	case p.Model == "":
		return p, fmt.Errorf("model: Field required")
	case raw["max_tokens"] == nil:
		return p, fmt.Errorf("max_tokens: Field required")
	case len(p.Messages) == 0:
		return p, fmt.Errorf("messages: Field required")
	}
	return p, nil
}

// normalizeShorthand is the request with the API's string shorthands
// (system and a message's content as a plain string) written as the one
// text block they stand for, as the SDK's types hold them.
func normalizeShorthand(raw map[string]any) []byte {
	block := func(v any) any {
		if t, ok := v.(string); ok {
			return []any{map[string]any{"type": "text", "text": t}}
		}
		return v
	}
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		out[k] = v
	}
	if v, ok := out["system"]; ok {
		out["system"] = block(v)
	}
	if msgs, ok := out["messages"].([]any); ok {
		norm := make([]any, len(msgs))
		for i, m := range msgs {
			if mm, ok := m.(map[string]any); ok {
				c := make(map[string]any, len(mm))
				for k, v := range mm {
					c[k] = v
				}
				c["content"] = block(mm["content"])
				m = c
			}
			norm[i] = m
		}
		out["messages"] = norm
	}
	b, _ := json.Marshal(out)
	return b
}

// jsonFields are the JSON names of t's fields.
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}

// cacheStats splits the request's input tokens (its JSON bytes / 4, as
// the chat stand-in counts) into uncached, read from the cache and
// written to it. The prefix through each cache_control breakpoint (tools,
// then system, then messages, in order) is cached by the request; as
// Anthropic's API does, each breakpoint also looks back over the up to 20
// block boundaries before it for a prefix an earlier request of the model
// cached: the longest found is read, the rest up to the last breakpoint
// written. There is no minimum length.
func (s *Server) cacheStats(p sdk.MessageNewParams) anthropic.Usage {
	h := sha256.New()
	size := 0
	var bounds []prefix
	add := func(v any, cc *sdk.CacheControlEphemeralParam) {
		b := canonical(v)
		h.Write(b)
		size += len(b)
		bounds = append(bounds, prefix{key: fmt.Sprintf("%s\x00%x", p.Model, h.Sum(nil)), size: size,
			mark: cc != nil && !param.IsOmitted(*cc)})
	}
	for _, t := range p.Tools {
		add(t, t.GetCacheControl())
	}
	for _, t := range p.System {
		add(t, &t.CacheControl)
	}
	for _, m := range p.Messages {
		blocks := []sdk.ContentBlockParamUnion(nil)
		switch {
		case m.OfUser != nil:
			blocks = m.OfUser.Content
		case m.OfAssistant != nil:
			blocks = m.OfAssistant.Content
		}
		if len(blocks) == 0 {
			add(m, nil)
		}
		for _, c := range blocks {
			add(c, c.GetCacheControl())
		}
	}
	if !param.IsOmitted(p.CacheControl) && len(bounds) > 0 {
		bounds[len(bounds)-1].mark = true // the top-level breakpoint: the whole prompt
	}
	return s.anth.account(bounds, size)
}

// canonical is the block v as the cache keys it: its JSON with object
// keys sorted (the SDK's encoder writes some maps, a tool's input_schema
// properties and extra fields, in map order, which would make the same
// prefix hash differently from one request to the next) and without its
// cache_control (a breakpoint moved to a later block still finds the
// prefix cached, as Claude Code's next turn does).
func canonical(v any) []byte {
	b, _ := json.Marshal(v)
	var x any
	if json.Unmarshal(b, &x) != nil {
		return b
	}
	if m, ok := x.(map[string]any); ok {
		delete(m, "cache_control")
	}
	out, _ := json.Marshal(x)
	return out
}

// prefix is a block boundary: the hash of the request through it, its
// length in bytes, and whether a breakpoint marks it.
type prefix struct {
	key  string
	size int
	mark bool
}

// lookback is how many block boundaries before a breakpoint are checked
// for a cached prefix.
const lookback = 20

// account counts a request's block boundaries against the cache and
// caches those its breakpoints mark.
func (a *anthropicServer) account(bounds []prefix, size int) anthropic.Usage {
	tokens := func(n int) int64 { return int64(n / 4) }
	a.mu.Lock()
	defer a.mu.Unlock()
	read, last := 0, 0
	for i, b := range bounds {
		if !b.mark {
			continue
		}
		for j := i; j >= 0 && j >= i-lookback; j-- {
			if a.prefixes[bounds[j].key] {
				read = max(read, bounds[j].size)
				break
			}
		}
		last = b.size
	}
	for _, b := range bounds {
		if b.mark {
			a.prefixes[b.key] = true
		}
	}
	written := max(last-read, 0)
	u := anthropic.Usage{CacheReadInputTokens: tokens(read), CacheCreationInputTokens: tokens(read+written) - tokens(read)}
	u.InputTokens = tokens(size) + 1 - u.CacheReadInputTokens - u.CacheCreationInputTokens
	return u
}
