package httpx

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
)

// DefaultMaxHeaderBytes is the default of Base.MaxHeaderBytes: what the
// request line and headers of one request may add up to.
const DefaultMaxHeaderBytes = 64 << 10

// ServerMaxHeaderBytes is the http.Server's MaxHeaderBytes for the
// services. It is far above any Base.MaxHeaderBytes so that the engine, not
// net/http, refuses oversized headers: net/http would answer with a
// plain-text 431 before the service sees the request, the engine answers
// with the service's JSON error. Requests over this bound still get
// net/http's plain-text 431 (it cannot be helped without reading them).
const ServerMaxHeaderBytes = 1 << 20

// ErrHeadersTooLarge is the kind of a 431.
var ErrHeadersTooLarge = headersTooLarge{}

type headersTooLarge struct{}

func (headersTooLarge) Error() string { return "request headers too large" }

// HeadersTooLarge returns the error for a request whose line and headers
// are over limit bytes.
func HeadersTooLarge(limit int) error {
	return &domain.Error{Kind: ErrHeadersTooLarge, Code: "headers_too_large",
		Message: fmt.Sprintf("the request line and headers are over the limit of %d bytes; send fewer or shorter headers (cookies included)", limit)}
}

// HeaderBytes is the size of r's request line and headers as they came on
// the wire (HTTP/1.1 framing: "Name: value\r\n" per field), the measure
// http.Server.MaxHeaderBytes bounds.
func HeaderBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	if r.Host != "" {
		n += len("Host: ") + len(r.Host) + 2
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + 2 + len(v) + 2
		}
	}
	return n + 2
}

// limitHeaders refuses a request whose line and headers are over n bytes
// with a 431 through the service's error responder.
func limitHeaders(n int, fail func(*gin.Context, error)) gin.HandlerFunc {
	return Handle(fail, func(c *gin.Context) error {
		if HeaderBytes(c.Request) > n {
			c.Header("Connection", "close")
			return HeadersTooLarge(n)
		}
		return nil
	})
}
