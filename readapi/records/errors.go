package records

import (
	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/readapi/httpx"
)

// handle is a records route: h returns its error, and fail answers it.
func handle(h httpx.Handler) gin.HandlerFunc { return httpx.Handle(fail, h) }

// fail is the records service's one error responder.
func fail(c *gin.Context, err error) {
	p := httpx.ProblemFor(c, err)
	body := gin.H{"status": p.Status, "code": p.Code, "message": p.Message}
	if p.Field != "" {
		body["field"] = p.Field
	}
	c.Abort()
	c.PureJSON(p.Status, gin.H{"error": body})
}
