package gateway

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/readapi/gateway/messages"
	"github.com/arr-dev/arr/readapi/httpx"
)

// The routes of Anthropic's Messages API. POST /v1/messages is the
// Messages dialect on the one completion route (serve).
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

// countTokens serves POST /v1/messages/count_tokens: the prompt's size as
// the gateway counts it for routing, the context window and the cost
// checks (complete.Request.PromptEstimate) of the chat completion the
// body asks for, as the chat route validates it — no upstream call,
// nothing spent or recorded.
func (s *completer) countTokens(c *gin.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	mr, err := messages.ParseCountRequest(body)
	if err != nil {
		return err
	}
	chat, err := mr.ChatBody()
	if err != nil {
		return err
	}
	req, err := parseChatRequest(chat)
	if err != nil {
		return err
	}
	n := req.PromptEstimate()
	if mr.PassThrough() {
		// As the completion estimates it (complete.Request.PromptEstimate):
		// at least the body's bytes over 3.
		n = max(n, int64(len(body)+2)/3)
	}
	c.JSON(http.StatusOK, gin.H{"input_tokens": n})
	return nil
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
