package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/readapi/gateway/messages"
	"github.com/arr-dev/arr/readapi/httpx"
)

// The routes of Anthropic's Messages API.
const (
	messagesPath    = "/v1/messages"
	countTokensPath = "/v1/messages/count_tokens"
)

// isMessagesRoute says whether the request is for the Messages API, whose
// errors take Anthropic's shape.
func isMessagesRoute(c *gin.Context) bool {
	p := c.Request.URL.Path
	return p == messagesPath || strings.HasPrefix(p, messagesPath+"/")
}

// messagesChat parses a Messages body (count: a count_tokens body) and
// the chat completion it asks for, as the chat route validates it. It
// returns the model asked for, not the parsed Messages request, so that
// a completion in flight holds the body and its chat request only.
func messagesChat(c *gin.Context, count bool) (string, *complete.Request, error) {
	body, err := readBody(c)
	if err != nil {
		return "", nil, err
	}
	parse := messages.ParseRequest
	if count {
		parse = messages.ParseCountRequest
	}
	mr, err := parse(body)
	if err != nil {
		return "", nil, err
	}
	chat, err := mr.ChatBody()
	if err != nil {
		return "", nil, err
	}
	req, err := parseChatRequest(chat)
	if err != nil {
		return "", nil, err
	}
	req.Body = body // the audit entry hashes what the client sent
	return mr.Model(), req, nil
}

// handleMessages serves POST /v1/messages: the request is translated into
// the chat completion it asks for (package messages) and run by the same
// use case as /v1/chat/completions (commands/complete: routing, the key's
// limits, failover, the cache, usage and the audit record, whose
// request_hash covers the body the client sent); the reply is translated
// back into a Message, or the stream chunk by chunk into Anthropic's
// events.
func (s *completer) handleMessages(c *gin.Context) error {
	model, req, err := messagesChat(c, false)
	if err != nil {
		return err
	}
	res, err := s.run(c, req)
	if err != nil {
		return err
	}
	id := newMessageID()
	if res.Stream != nil {
		relayEvents(c, res.Stream, anthropicEvents{messages.NewStream(id, model)})
		return nil
	}
	chatReply, err := withRouting(res.Reply.Body, res.Reply.HasRouting, res.Reply.Routing)
	if err != nil {
		return err
	}
	out, err := messages.FromChat(chatReply, id, res.Reply.Usage.Prompt, res.Reply.Usage.Completion)
	if err != nil {
		return &complete.UpstreamFailure{Attempts: []string{"the reply could not be read as a chat completion: " + err.Error()}}
	}
	h := c.Writer.Header()
	setRoutingHeaders(h, res.Reply.Routing)
	h.Set("X-Arr-Audit-Hash", res.Reply.Routing.AuditHash)
	h.Set("X-Arr-Elapsed-Sec", strconv.FormatFloat(res.Reply.Routing.ElapsedSec, 'f', -1, 64))
	c.Data(http.StatusOK, "application/json", out)
	return nil
}

// countTokens serves POST /v1/messages/count_tokens: the prompt's size as
// the gateway counts it for routing, the context window and the cost
// checks (complete.Request.PromptEstimate) — no upstream call, nothing
// spent or recorded.
func (s *completer) countTokens(c *gin.Context) error {
	_, req, err := messagesChat(c, true)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"input_tokens": req.PromptEstimate()})
	return nil
}

// newMessageID is msg_ and 24 random bytes in hex.
func newMessageID() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return "msg_" + hex.EncodeToString(b[:])
}

// refusedMessages answers an upstream's refusal of the request on the
// Messages routes: its status, and its message in Anthropic's shape.
func refusedMessages(c *gin.Context, r *complete.Refused) {
	var oe struct {
		Error struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &oe)
	msg, code := oe.Error.Message, "upstream_refused"
	if msg == "" {
		msg = string(r.Body)
	}
	if s, ok := oe.Error.Code.(string); ok && s != "" {
		code = s
	}
	c.Abort()
	c.Data(r.Status, "application/json", messages.ErrorBody(r.Status, code, "the upstream refused the request: "+msg, "", httpx.RequestID(c)))
}

// anthropicEvents is the Messages translator as relayEvents wants it:
// every failure an api_error event.
type anthropicEvents struct{ *messages.Stream }

func (a anthropicEvents) Fail(code, msg string) []messages.Event {
	return a.Stream.Fail("api_error", code, msg)
}

func (anthropicEvents) sse(e messages.Event) (string, []byte) { return e.Type, e.Data }
