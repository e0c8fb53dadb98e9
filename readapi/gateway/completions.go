package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain/routing"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/gateway/dialect"
	"github.com/arr-dev/arr/readapi/httpx"
)

// completer serves the completion routes and the routes that answer from
// the audit and usage read models. Safe for concurrent use.
type completer struct {
	d   httpx.Deps
	o   Options
	app app.Application
}

// chatCompletions is POST /v1/chat/completions as a dialect: the
// identity. The body is the chat request, the reply the upstream's with
// the routing object spliced in (its bytes as they came), the stream its
// chunks as data lines, then the routing chunk and [DONE] — or, if the
// upstream broke off, the routing chunk with finish_reason "error" and
// an SSE error event in the OpenAI error shape; or, if the completion
// could not be recorded, the error event alone.
type chatCompletions struct{}

func (chatCompletions) Parse(body []byte) (dialect.Exchange, error) { return chatExchange{body}, nil }

// ID is "": a chat completion keeps the upstream's id.
func (chatCompletions) ID([24]byte) string { return "" }

type chatExchange struct{ body []byte }

func (e chatExchange) Chat() ([]byte, error) { return e.body, nil }

func (chatExchange) Reply(completion []byte, _ dialect.Turn, _ dialect.Usage) ([]byte, error) {
	return completion, nil
}

func (chatExchange) Stream(dialect.Turn) dialect.Stream { return &chatStream{} }

// chatStream relays chunks as they are; one is an event slice
// reused for each chunk.
type chatStream struct{ one [1]dialect.Event }

func (s *chatStream) Chunk(data []byte) ([]dialect.Event, error) {
	s.one[0] = dialect.Event{Data: data}
	return s.one[:], nil
}

// Fail is an SSE "error" event in the OpenAI error shape (and no [DONE]).
func (*chatStream) Fail(code, msg string) []dialect.Event {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "upstream_error", "param": nil, "code": code}})
	return []dialect.Event{{Type: "error", Data: b, Closing: true}}
}

func (*chatStream) Finish() []dialect.Event {
	return []dialect.Event{{Data: []byte("[DONE]"), Closing: true}}
}

// run runs the completion use case for the key's caller.
func (s *completer) run(c *gin.Context, req *complete.Request) (complete.Result, error) {
	p, _ := httpx.PrincipalOf(c)
	caller := callerOf(p)
	g, err := s.app.Queries.Guardrails.Effective(c.Request.Context(), p.AccountID, p.KeyID)
	if err != nil {
		return complete.Result{}, err
	}
	caller.Guardrails = g.Policy
	return s.app.Completions.Handle(c.Request.Context(), complete.Command{
		Caller:  caller,
		Request: req, Cache: cacheMode(c.GetHeader("X-Arr-Cache")), RequestID: c.GetString("request_id"),
	})
}

// cacheMode reads the X-Arr-Cache header: on, off, or (absent or anything
// else) the automatic rule.
func cacheMode(h string) complete.CacheMode {
	switch strings.ToLower(h) {
	case "on", "true", "1":
		return complete.CacheOn
	case "off", "false", "0":
		return complete.CacheOff
	}
	return complete.CacheAuto
}

// failCompletion answers a completion that failed: an upstream's refusal
// of the request passes through with its status and body (on the Messages
// routes, its status and message in Anthropic's shape). A completion
// whose audit entry may or may not have committed gets no answer at all
// (the connection is dropped): both "failed" and a reply could be false.
func failCompletion(c *gin.Context, err error) {
	if errors.Is(err, commands.ErrOutcomeUnknown) {
		panic(http.ErrAbortHandler)
	}
	var r *complete.Refused
	if errors.As(err, &r) && json.Valid(r.Body) {
		if isMessagesRoute(c) && r.API == routing.APIAnthropic {
			// An Anthropic upstream's refusal of a request passed through:
			// its status and its body, as the client's SDK reads them.
			c.Data(r.Status, "application/json", r.Body)
			return
		}
		if isMessagesRoute(c) {
			refusedMessages(c, r)
			return
		}
		c.Data(r.Status, "application/json", r.Body)
		return
	}
	fail(c, err)
}

// setRoutingHeaders writes the X-Arr-* headers known before the body.
func setRoutingHeaders(h http.Header, ri complete.Routing) {
	h.Set("X-Arr-Tier", ri.Tier)
	h.Set("X-Arr-Model", ri.Model)
	h.Set("X-Arr-Difficulty-Score", strconv.FormatFloat(ri.DifficultyScore, 'f', -1, 64))
	h.Set("X-Arr-Cost-Per-1k", strconv.FormatFloat(ri.CostPer1K, 'f', -1, 64))
	h.Set("X-Arr-Cache-Hit", strconv.FormatBool(ri.CacheHit))
}

// objectEnd returns the index of the closing brace of a JSON object body
// (trailing whitespace allowed), or -1.
func objectEnd(body []byte) int {
	i := len(body) - 1
	for i >= 0 && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t') {
		i--
	}
	if i < 1 || body[i] != '}' {
		return -1
	}
	return i
}

// withRouting adds the routing object to a completion body. The body is
// spliced, not decoded and encoded again: the upstream's fields go out
// byte for byte. A body that already has a "routing" field is rebuilt
// with ours in its place.
func withRouting(body []byte, hasRouting bool, ri complete.Routing) ([]byte, error) {
	r, err := json.Marshal(ri)
	if err != nil {
		return nil, err
	}
	end := objectEnd(body)
	if hasRouting || end < 0 {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(body, &doc); err != nil {
			return nil, err
		}
		doc["routing"] = r
		return json.Marshal(doc)
	}
	out := make([]byte, 0, end+len(r)+16)
	out = append(out, body[:end]...)
	if bytes.TrimSpace(out)[len(bytes.TrimSpace(out))-1] != '{' {
		out = append(out, ',')
	}
	out = append(out, `"routing":`...)
	out = append(out, r...)
	return append(out, '}'), nil
}
