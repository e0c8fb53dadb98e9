package httpx

import (
	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/commands"
)

// RequestID is the id the request-id middleware gave the request (the
// caller's X-Request-Id when it is sane, else a new UUID).
func RequestID(c *gin.Context) string { return c.GetString("request_id") }

// CommandMetadata is the Metadata of a command a handler runs for actor:
// commands.NewMetadata with the request's id, so the events it appends
// carry the request and correlation ids the caller saw in X-Request-Id.
func CommandMetadata(c *gin.Context, actor string) commands.Metadata {
	return commands.NewMetadata(actor, RequestID(c))
}
