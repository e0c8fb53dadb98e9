package gateway

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"encoding/json"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/httpx"
)

// completer serves the completion routes and the routes that answer from
// the audit and usage read models. Safe for concurrent use.
type completer struct {
	d   httpx.Deps
	o   Options
	app app.Application
}

// handle serves POST /v1/chat/completions: it parses the request, runs the
// completion (commands/complete) and writes the reply as JSON or the
// stream as server-sent events.
func (s *completer) handle(c *gin.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	req, err := parseChatRequest(body)
	if err != nil {
		return err
	}
	res, err := s.run(c, req)
	if err != nil {
		return err
	}
	if res.Stream != nil {
		writeStream(c, res.Stream, req.IncludeUsage)
		return nil
	}
	return writeReply(c, res.Reply)
}

// run runs the completion use case for the key's caller.
func (s *completer) run(c *gin.Context, req *complete.Request) (complete.Result, error) {
	p, _ := httpx.PrincipalOf(c)
	return s.app.Completions.Handle(c.Request.Context(), complete.Command{
		Caller:  callerOf(p),
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

// writeReply writes a whole completion with its routing object and
// headers.
func writeReply(c *gin.Context, rep complete.Reply) error {
	out, err := withRouting(rep.Body, rep.HasRouting, rep.Routing)
	if err != nil {
		return err
	}
	h := c.Writer.Header()
	setRoutingHeaders(h, rep.Routing)
	h.Set("X-Arr-Audit-Hash", rep.Routing.AuditHash)
	h.Set("X-Arr-Elapsed-Sec", strconv.FormatFloat(rep.Routing.ElapsedSec, 'f', -1, 64))
	c.Data(http.StatusOK, "application/json", out)
	return nil
}
