package recordsapi

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/httpx"
)

// handle is a records route: h returns its error, and fail answers it.
func handle(h httpx.Handler) gin.HandlerFunc { return httpx.Handle(fail, h) }

// fail is the records service's one error responder. A 503 that carries a
// domain error keeps its code and message, with the Retry-After every 503
// has: contact_data_unavailable (a data key that cannot be unwrapped) and
// query_timeout (a query the server stopped at its route's statement
// timeout, or a turn of a costly route not had within it; the message
// names the limit: projections.QueryTimeout).
func fail(c *gin.Context, err error) {
	p := httpx.ProblemFor(c, err)
	var de *domain.Error
	if p.Status == http.StatusServiceUnavailable && errors.As(err, &de) {
		p.Code, p.Message = de.Code, de.Message
	}
	body := gin.H{"status": p.Status, "code": p.Code, "message": p.Message}
	if p.Field != "" {
		body["field"] = p.Field
	}
	c.Abort()
	c.PureJSON(p.Status, gin.H{"error": body})
}
