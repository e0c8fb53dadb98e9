package gateway

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/commands/spend"
	"github.com/arr-dev/arr/readapi/gateway/messages"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// openAIType maps a status to the OpenAI error type clients switch on.
func openAIType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestTimeout, http.StatusRequestEntityTooLarge, http.StatusRequestHeaderFieldsTooLarge,
		http.StatusMethodNotAllowed, http.StatusMisdirectedRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusConflict:
		return "conflict_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable:
		return "service_unavailable_error"
	}
	return "api_error"
}

// handle is a gateway route: h returns its error, and failCompletion
// answers it (an upstream's refusal as sent, no answer at all when the
// audit chain cannot tell, else fail).
func handle(h httpx.Handler) gin.HandlerFunc { return httpx.Handle(failCompletion, h) }

// fail is the gateway's one error responder: OpenAI's error shape, or on
// the Messages routes (/v1/messages…, authentication and limits included)
// Anthropic's.
func fail(c *gin.Context, err error) {
	p := httpx.ProblemFor(c, err)
	var refused *spend.Refusal
	var quota *ratelimit.Refusal
	if errors.As(err, &refused) || errors.As(err, &quota) {
		ratelimit.MarkNotServed(c) // refused before any upstream call: no plan quota, no meter
	}
	var uf *complete.UpstreamFailure
	var long *complete.DurationExceeded
	var full *httpx.BodiesFull
	switch {
	case errors.As(err, &uf):
		p = httpx.Problem{Status: http.StatusBadGateway, Code: "upstream_unavailable", Message: uf.Error()}
	case errors.As(err, &long):
		p = httpx.Problem{Status: http.StatusGatewayTimeout, Code: "max_request_duration_exceeded", Message: long.Error()}
	case errors.As(err, &full):
		p = refuseBodies(c, full)
	case errors.Is(err, complete.ErrReservationLost):
		p = httpx.Problem{Status: http.StatusServiceUnavailable, Code: "reservation_lost", Message: err.Error()}
		c.Header("Retry-After", "1")
	}
	c.Abort()
	if isMessagesRoute(c) {
		c.Data(p.Status, "application/json", messages.ErrorBody(p.Status, p.Code, p.Message, p.Field, httpx.RequestID(c)))
		return
	}
	var param any
	if p.Field != "" {
		param = p.Field
	}
	typ := openAIType(p.Status)
	if p.Code == "budget_exceeded" {
		typ = "insufficient_quota" // OpenAI's type for spend that ran out
	}
	c.PureJSON(p.Status, gin.H{"error": gin.H{
		"message": p.Message, "type": typ, "param": param, "code": p.Code,
	}})
}
