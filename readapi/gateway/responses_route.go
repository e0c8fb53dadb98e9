package gateway

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/readapi/gateway/responses"
)

// responsesPath is the route of the OpenAI Responses API.
const responsesPath = "/v1/responses"

// handleResponses serves POST /v1/responses: the request is translated
// into the chat completion it asks for (package responses) and run by the
// same use case as /v1/chat/completions (commands/complete: routing,
// failover, the cache, usage and the audit record, whose request_hash
// covers the body the client sent); the reply is translated back into a
// Response object, or the stream event by event into response.* events.
func (s *completer) handleResponses(c *gin.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	rr, err := responses.ParseRequest(body)
	if err != nil {
		return err
	}
	chat, err := rr.ChatBody()
	if err != nil {
		return err
	}
	req, err := parseChatRequest(chat)
	if err != nil {
		return err
	}
	req.Body = body // the audit entry hashes what the client sent
	res, err := s.run(c, req)
	if err != nil {
		return err
	}
	id, created := newResponseID(), time.Now().Unix()
	if res.Stream != nil {
		relayEvents(c, res.Stream, responsesEvents{responses.NewStream(rr, id, created)})
		return nil
	}
	chatReply, err := withRouting(res.Reply.Body, res.Reply.HasRouting, res.Reply.Routing)
	if err != nil {
		return err
	}
	out, err := responses.FromChat(chatReply, rr, id, created)
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

// newResponseID is resp_ and 24 random bytes in hex.
func newResponseID() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return "resp_" + hex.EncodeToString(b[:])
}

// responsesEvents is the Responses translator as relayEvents wants it.
type responsesEvents struct{ *responses.Stream }

func (responsesEvents) sse(e responses.Event) (string, []byte) { return e.Type, e.Data }
