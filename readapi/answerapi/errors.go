package answerapi

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/answer"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// handle is an answer route: h returns its error, and fail answers it.
func handle(h httpx.Handler) gin.HandlerFunc { return httpx.Handle(fail, h) }

// fail is the answer service's one error responder. A 503 that carries a
// domain error (web search down) keeps its code and message; the handler
// sets Retry-After.
func fail(c *gin.Context, err error) {
	status, body := problem(c, err)
	c.Abort()
	c.PureJSON(status, body)
}

// problem is err's status and error body, as fail writes them (and a
// streamed answer's error event carries them). On the Sonar-compatible
// route (sonarPath) the body is in the shape OpenAI's and Perplexity's
// clients parse: {"error": {"message", "type", "code", "param"}}, type
// arr's error code (as Perplexity's "invalid_model"), code the HTTP
// status (a number, as Perplexity sends it), param the field, when one is
// at fault.
func problem(c *gin.Context, err error) (int, gin.H) {
	p := httpx.ProblemFor(c, err)
	var de *domain.Error
	var so *answer.StructuredOutputInvalid
	switch {
	case errors.As(err, &so):
		p = httpx.Problem{Status: http.StatusBadGateway, Code: "structured_output_invalid", Message: so.Error()}
	case p.Status == 503 && errors.As(err, &de):
		p.Code, p.Message = de.Code, de.Message
	}
	if c.Request != nil && c.Request.URL.Path == sonarPath {
		body := gin.H{"message": p.Message, "type": p.Code, "code": p.Status}
		if p.Field != "" {
			body["param"] = p.Field
		}
		return p.Status, gin.H{"error": body}
	}
	body := gin.H{"status": p.Status, "code": p.Code, "message": p.Message}
	if p.Field != "" {
		body["field"] = p.Field
	}
	return p.Status, gin.H{"error": body}
}

// markNotServed: the request counts against no quota or meter.
func markNotServed(c *gin.Context) { ratelimit.MarkNotServed(c) }
