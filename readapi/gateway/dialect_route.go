package gateway

import (
	"crypto/rand"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/readapi/gateway/dialect"
	"github.com/arr-dev/arr/readapi/httpx"
)

// serve is the one completion route, for any dialect (chat completions,
// the Responses API, the Messages API): the body is parsed into the chat
// completion it asks for and validated as the chat route validates it;
// the completion use case runs it (commands/complete: routing, the key's
// limits, failover, the cache, usage and the audit record, whose
// request_hash covers the body the client sent); the reply is
// translated back, or the stream chunk by chunk into the dialect's
// events. The route holds no rules of a dialect's API.
func (s *completer) serve(d dialect.Dialect) httpx.Handler {
	return func(c *gin.Context) error {
		body, err := readBody(c)
		if err != nil {
			return err
		}
		ex, err := d.Parse(body)
		if err != nil {
			return err
		}
		chat, err := ex.Chat()
		if err != nil {
			return err
		}
		req, err := parseChatRequest(chat)
		if err != nil {
			return err
		}
		req.Body = body // the audit entry hashes what the client sent
		if p, ok := ex.(dialect.Passthrough); ok {
			passthrough(c, req, p)
		}
		res, err := s.run(c, req)
		if err != nil {
			return nativeOnly(ex, err)
		}
		switch {
		case res.Stream != nil && res.Stream.Native():
			relayNative(c, res.Stream)
			return nil
		case res.Stream == nil && res.Reply.Native:
			return writeNativeReply(c, res.Reply)
		}
		var random [24]byte
		_, _ = rand.Read(random[:])
		t := dialect.Turn{ID: d.ID(random), Created: time.Now().Unix()}
		if res.Stream != nil {
			relay(c, res.Stream, ex.Stream(t), req.IncludeUsage)
			return nil
		}
		return writeReply(c, res.Reply, ex, t)
	}
}

// writeNativeReply writes a pass-through reply as the upstream sent it,
// the routing object spliced in, with the routing headers.
func writeNativeReply(c *gin.Context, rep complete.Reply) error {
	out, err := withRouting(rep.Body, rep.HasRouting, rep.Routing)
	if err != nil {
		return &complete.UpstreamFailure{Attempts: []string{"the reply could not take the routing object: " + err.Error()}}
	}
	h := c.Writer.Header()
	setRoutingHeaders(h, rep.Routing)
	h.Set("X-Arr-Audit-Hash", rep.Routing.AuditHash)
	h.Set("X-Arr-Elapsed-Sec", strconv.FormatFloat(rep.Routing.ElapsedSec, 'f', -1, 64))
	c.Data(http.StatusOK, "application/json", out)
	return nil
}

// writeReply writes a whole completion, its routing object spliced in
// and translated into the dialect's reply, with the routing headers.
func writeReply(c *gin.Context, rep complete.Reply, ex dialect.Exchange, t dialect.Turn) error {
	completion, err := withRouting(rep.Body, rep.HasRouting, rep.Routing)
	if err != nil {
		return err
	}
	out, err := ex.Reply(completion, t, dialect.Usage{Prompt: rep.Usage.Prompt, Completion: rep.Usage.Completion})
	if err != nil {
		return &complete.UpstreamFailure{Attempts: []string{"the reply could not be read as a chat completion: " + err.Error()}}
	}
	h := c.Writer.Header()
	setRoutingHeaders(h, rep.Routing)
	h.Set("X-Arr-Audit-Hash", rep.Routing.AuditHash)
	h.Set("X-Arr-Elapsed-Sec", strconv.FormatFloat(rep.Routing.ElapsedSec, 'f', -1, 64))
	c.Data(http.StatusOK, "application/json", out)
	return nil
}
