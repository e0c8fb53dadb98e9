package httpx

import "github.com/gin-gonic/gin"

// Handler is a route handler (or a middleware) that returns its error
// instead of writing it: it writes only what it answers on success — a
// JSON body, a redirect, a page that shows a form's error — and leaves
// every error to the service's responder, through Handle.
type Handler func(c *gin.Context) error

// Handle returns the gin handler that runs h and answers the error h
// returns with fail, the service's one error responder: it writes the
// service's body shape (the records and answer services' Problem JSON, the
// account pages' HTML page, the gateway's OpenAI error). After an error
// the chain stops (c.Abort), and nothing else is written: an error h
// returns after it had already written its response is only recorded
// (c.Error, for the access log), never written a second time. A nil error
// writes nothing, and a middleware that returns nil lets the chain go on.
// The returned handler is safe for concurrent use if h and fail are.
func Handle(fail func(*gin.Context, error), h Handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			respond(c, fail, err)
		}
	}
}

// respond stops the chain and answers err with fail, unless a response was
// already written, or the client hung up (ClientClosed; a body that timed
// out or broke off, IsBodyError, is answered as such: its read deadline
// cancels the context too): then err is only
// recorded, and a hang-up's status is StatusClientClosedRequest, for the
// access log and the metrics, whatever err is (a query cancelled under
// it, an upstream call cut short): the client went away, the server did
// not fail.
func respond(c *gin.Context, fail func(*gin.Context, error), err error) {
	c.Abort()
	if c.Writer.Written() {
		_ = c.Error(err)
		return
	}
	if ClientClosed(c.Request.Context()) && !IsBodyError(err) {
		_ = c.Error(err)
		c.Status(StatusClientClosedRequest)
		return
	}
	fail(c, err)
}
