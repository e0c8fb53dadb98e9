package ratelimit

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
)

// Served reports whether a response with this status counts against a
// quota: every status but the 4xx refusals of what the request asked for
// (400 bad parameters, 403 a plan that does not allow it, 404 an unknown
// list, 409, 413, ...). A 429 counts (it took nothing: the window was
// full), and so does a 5xx: the server may have done the work (an upstream
// call) before it failed; and so does a hang-up (499, the status
// httpx.StatusClientClosedRequest logs a request whose client went away
// before its answer with): the work it asked for had started. A 401
// never reaches the quota. Pure; safe for concurrent use.
func Served(status int) bool {
	return status < 400 || status >= 500 || status == http.StatusTooManyRequests || status == statusClientClosedRequest
}

// statusClientClosedRequest is httpx.StatusClientClosedRequest (httpx
// imports this package).
const statusClientClosedRequest = 499

// notServedKey marks, on a request's gin context, a response that did no
// work whatever its status: a 429 of a key's own limits (commands/spend),
// refused before any upstream call.
const notServedKey = "ratelimit.not_served"

// MarkNotServed says the request's response did no work and counts
// against no quota or meter, whatever its status (a key's own limits
// refused it).
func MarkNotServed(c *gin.Context) { c.Set(notServedKey, true) }

// ServedRequest is Served for the request c answered: false too when it
// was marked not served.
func ServedRequest(c *gin.Context) bool {
	return Served(c.Writer.Status()) && !c.GetBool(notServedKey)
}

// giveBackTimeout bounds giving a request back after its response.
const giveBackTimeout = 5 * time.Second

// countServed runs the rest of the chain for a request the window
// admitted (res) and gives the request back if its response is not
// Served. Its X-RateLimit-Remaining then says so: the refused request
// leaves the window as it found it.
func (q *Quota) countServed(c *gin.Context, bucket string, res Result) {
	w := &refundWriter{ResponseWriter: c.Writer, res: res}
	c.Writer = w
	defer func() { c.Writer = w.ResponseWriter }()
	c.Next()
	w.fix() // a response with no body: the engine writes its headers next
	if ServedRequest(c) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request.Context()), giveBackTimeout)
	defer cancel()
	if err := q.limiter.Give(ctx, bucket, res.Window); err != nil {
		// The request stays counted: the caller loses one request of
		// the window, never gains one.
		q.cfg.Logger.Warn("giving back a refused request's quota failed", "bucket", bucket, "err", err,
			"request_id", c.GetString("request_id"))
	}
}

// refundWriter corrects X-RateLimit-Remaining when the response's headers
// go out with a status that is not Served: the request is about to be
// given back, so the window has one more left than Take said.
type refundWriter struct {
	gin.ResponseWriter
	res  Result
	done bool
}

func (w *refundWriter) fix() {
	if w.done {
		return
	}
	w.done = true
	if !w.ResponseWriter.Written() && !Served(w.ResponseWriter.Status()) {
		w.Header().Set("X-RateLimit-Remaining", strconv.FormatInt(min(w.res.Remaining+1, w.res.Limit), 10))
	}
}

// WriteHeaderNow implements gin.ResponseWriter.
func (w *refundWriter) WriteHeaderNow() {
	w.fix()
	w.ResponseWriter.WriteHeaderNow()
}

// Write implements http.ResponseWriter.
func (w *refundWriter) Write(b []byte) (int, error) {
	w.fix()
	return w.ResponseWriter.Write(b)
}

// WriteString implements gin.ResponseWriter.
func (w *refundWriter) WriteString(s string) (int, error) {
	w.fix()
	return w.ResponseWriter.WriteString(s)
}

// Flush implements http.Flusher.
func (w *refundWriter) Flush() {
	w.fix()
	w.ResponseWriter.Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *refundWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
