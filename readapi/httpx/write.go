package httpx

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// limitWrite gives every response timeout to be written from its first
// byte (Base.WriteTimeout): the connection's write deadline is set when
// the status line goes out, so a client that does not read its answer
// makes the handler's write fail after timeout, and the handler and its
// connection end, however long the answer.
func limitWrite(timeout time.Duration) gin.HandlerFunc {
	return func(c *gin.Context) {
		w := &deadlineWriter{ResponseWriter: c.Writer, rc: http.NewResponseController(c.Writer), timeout: timeout}
		c.Writer = w
		c.Next()
	}
}

// deadlineWriter sets its connection's write deadline before its first
// byte is written.
type deadlineWriter struct {
	gin.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	armed   bool
}

func (w *deadlineWriter) arm() {
	if !w.armed {
		w.armed = true
		_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	}
}

func (w *deadlineWriter) WriteHeaderNow() {
	w.arm()
	w.ResponseWriter.WriteHeaderNow()
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.arm()
	return w.ResponseWriter.Write(b)
}

func (w *deadlineWriter) WriteString(s string) (int, error) {
	w.arm()
	return w.ResponseWriter.WriteString(s)
}

func (w *deadlineWriter) Flush() {
	w.arm()
	w.ResponseWriter.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
