package gateway

import (
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/arr-dev/arr/readapi/ratelimit"
)

// Request bodies in flight are bounded in the engine's body reader, for
// every route of the gateway (httpx.BodyGate, Options.BodyBytes,
// Options.AccountBodyBytes, Options.BodyWait): a body is charged by the
// bytes that arrive, per process and per account, until its request
// ends; refuseBodies answers a refusal in the route's dialect.

// maxBody is the largest request body of the gateway.
const maxBody = 4 << 20

// refuseBodies answers a bodiesFull in the dialect of the route.
func refuseBodies(c *gin.Context, e *httpx.BodiesFull) httpx.Problem {
	ratelimit.MarkNotServed(c) // nothing was kept or sent upstream
	c.Header("Retry-After", strconv.Itoa(e.Retry))
	if e.Account {
		return httpx.Problem{Status: http.StatusTooManyRequests, Code: "account_bodies_in_flight", Message: e.Error()}
	}
	status := http.StatusServiceUnavailable
	if isMessagesRoute(c) {
		status = 529 // Anthropic's overloaded_error
	}
	return httpx.Problem{Status: status, Code: "bodies_in_flight", Message: e.Error()}
}

// readBody reads the request's body into a buffer that grows as its
// bytes arrive (from one chunk, doubling up to its declared length), so
// that a body that comes slowly or not at all holds (almost) nothing: the
// engine's body reader charges the bytes read to the bodies in flight,
// and its MaxBytesReader bounds the length.
func readBody(c *gin.Context) ([]byte, error) {
	limit := int64(maxBody)
	if n := c.Request.ContentLength; n >= 0 && n < limit {
		limit = n
	}
	buf := make([]byte, 0, min(limit+1, httpx.BodyChunk))
	for {
		if len(buf) == cap(buf) {
			next := min(max(2*int64(cap(buf)), httpx.BodyChunk), limit+1)
			if next <= int64(cap(buf)) {
				next = int64(cap(buf)) + httpx.BodyChunk
			}
			grown := make([]byte, len(buf), next)
			copy(grown, buf)
			buf = grown
		}
		n, err := c.Request.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if n := c.Request.ContentLength; n >= 0 && int64(len(buf)) != n {
		if int64(len(buf)) < n {
			return nil, fmt.Errorf("the request body ended before its Content-Length: %w", io.ErrUnexpectedEOF)
		}
		return nil, fmt.Errorf("the request body is longer than its Content-Length")
	}
	return buf, nil
}
