package httpx

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
)

// DefaultBodyTimeout is the default of Base.BodyTimeout: how long a
// request's body may take to arrive, from the moment the engine starts on
// the request.
const DefaultBodyTimeout = 30 * time.Second

// ErrRequestTimeout is the kind of a 408: the client did not send its
// request body in time.
var ErrRequestTimeout = requestTimeout{}

type requestTimeout struct{}

func (requestTimeout) Error() string { return "request body timed out" }

// RequestTimeout returns the error for a body that did not arrive within
// limit.
func RequestTimeout(limit time.Duration) *domain.Error {
	return &domain.Error{Kind: ErrRequestTimeout, Code: "request_timeout",
		Message: fmt.Sprintf("the request body did not arrive within %s; send the whole body at once, or retry", limit)}
}

// bodyKey is where limitBody keeps the request's *body on the context.
const bodyKey = "arr.body"

// body is a request body read under the service's size limit and body
// deadline. Its errors are the client's, never the server's: a body that
// stops arriving is a 408 (ErrRequestTimeout), one over the limit keeps
// its *http.MaxBytesError (413), one that breaks off or is malformed is a
// 400 (incomplete_body); none of them wraps the network error under it,
// so none can be taken for a database outage (TranslateDB), and
// IsBodyError tells them all. It is read by one goroutine, the handler's.
type body struct {
	r       io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	// deadline is whether a read deadline is set on the connection.
	deadline bool
	// done: the body was read to its end (or there was none).
	done bool
	// gate, if set, is charged with every byte read (bodygate.go), by
	// charge, for c's account.
	gate   *BodyGate
	charge *bodyCharge
	c      *gin.Context
}

func (b *body) Read(p []byte) (int, error) {
	if b.gate == nil || b.done {
		return b.read(p)
	}
	if len(p) > BodyChunk {
		p = p[:BodyChunk]
	}
	n, err := b.read(p)
	if n > 0 {
		if b.charge == nil {
			b.charge = b.gate.charge(bodyAccount(b.c))
		}
		if full := b.charge.take(b.c.Request.Context(), int64(n)); full != nil {
			// Give back what was read and drop the rest through a small
			// buffer, so that the client reads the refusal.
			b.charge.release()
			if err == nil {
				var buf [4 << 10]byte
				for err == nil {
					_, err = b.read(buf[:])
				}
			}
			return 0, &bodyRefused{full}
		}
	}
	return n, err
}

// bodyRefused is a body refused for the bytes in flight (its
// *BodiesFull is the answer).
type bodyRefused struct{ err error }

func (f *bodyRefused) Error() string { return f.err.Error() }
func (f *bodyRefused) Unwrap() error { return f.err }

func (b *body) read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, io.EOF):
		b.finish()
		return n, err
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return n, err
	}
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return n, &bodyFailure{RequestTimeout(b.timeout)}
	}
	return n, &bodyFailure{domain.Invalid("incomplete_body", "", "the request body could not be read to its end (%v): send the whole body, as long as its Content-Length says", err)}
}

// bodyFailure is an error of the request body itself: it wraps the
// domain error the client gets, never the network error under it.
type bodyFailure struct{ err *domain.Error }

func (f *bodyFailure) Error() string { return f.err.Error() }
func (f *bodyFailure) Unwrap() error { return f.err }

// IsBodyError reports whether err is the request body's own failure — over
// the size limit, too slow, broken off — which a handler returns as it is
// (ProblemOf answers it with 413, 408 or 400) rather than as the body's
// content being invalid JSON.
func IsBodyError(err error) bool {
	var mbe *http.MaxBytesError
	var bf *bodyFailure
	var br *bodyRefused
	return errors.As(err, &mbe) || errors.As(err, &bf) || errors.As(err, &br)
}

// Close implements io.Closer.
func (b *body) Close() error { return b.r.Close() }

// finish lifts the body deadline once the body is read: the connection
// stays open for the response (a stream may last minutes) and net/http's
// own read for a hang-up must not time out under it.
func (b *body) finish() {
	b.done = true
	if b.deadline {
		b.deadline = false
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}

// limitBody caps the request body at n bytes (413 over it) and gives it
// until timeout to arrive (408 after it). A request whose Content-Length
// is over n is refused before anything is read.
// With a gate, every byte read is charged to it until the request ends.
func limitBody(n int64, timeout time.Duration, gate *BodyGate, fail func(*gin.Context, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > n {
			c.Header("Connection", "close")
			respond(c, fail, TooLarge(n))
			return
		}
		b := &body{r: http.MaxBytesReader(c.Writer, c.Request.Body, n), timeout: timeout, gate: gate, c: c}
		if c.Request.Body == nil || c.Request.Body == http.NoBody || c.Request.ContentLength == 0 {
			b.done = true
		} else {
			b.rc = http.NewResponseController(c.Writer)
			// Not every writer reaches a connection (a test's recorder
			// does not): then there is no deadline to set.
			b.deadline = b.rc.SetReadDeadline(time.Now().Add(timeout)) == nil
		}
		c.Request.Body = b
		c.Set(bodyKey, b)
		defer func() {
			if b.charge != nil {
				b.charge.release()
			}
		}()
		c.Next()
	}
}

// bodyUnread reports whether c's request has a body that was not read to
// its end. An error answered before the body is read closes the
// connection: net/http would otherwise read what is left of the body
// before it sends the answer (RFC 9112 section 9.6), so that a client with
// no key, or one that sends half a body, would wait for the body deadline.
func bodyUnread(c *gin.Context) bool {
	v, ok := c.Get(bodyKey)
	if !ok {
		return c.Request.ContentLength != 0 && c.Request.Body != nil && c.Request.Body != http.NoBody
	}
	b, ok := v.(*body)
	return ok && !b.done
}
