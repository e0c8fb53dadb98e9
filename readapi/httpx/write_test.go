package httpx_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/readapi/httpx"
)

// TestWriteTimeoutEndsAnUnreadAnswer: with Base.WriteTimeout, a handler
// whose client never reads its answer (32 MiB, far more than the sockets'
// buffers hold) has its write fail once the deadline passes, so it ends
// and frees what it holds; without one it would block for as long as the
// connection stays open.
func TestWriteTimeoutEndsAnUnreadAnswer(t *testing.T) {
	t.Parallel()
	done := make(chan error, 1)
	e, err := httpx.NewEngine(httpx.Base{
		Service: "test", Fail: func(c *gin.Context, err error) { c.AbortWithStatus(500) }, OpenAPI: []byte(`{}`),
		Logger: slog.New(slog.DiscardHandler), WriteTimeout: 300 * time.Millisecond,
		Health: func(ctx context.Context) (int, any) { return http.StatusOK, gin.H{"status": "ok"} },
	})
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 32<<20)
	e.GET("/big", func(c *gin.Context) {
		c.Header("Content-Length", fmt.Sprint(len(big)))
		_, err := c.Writer.Write(big)
		done <- err
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	conn, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /big HTTP/1.1\r\nHost: test\r\n\r\n")
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the handler wrote 32 MiB to a client that reads nothing, without an error")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the handler's write to a client that reads nothing is still blocked after 20 s (a write timeout of 300 ms)")
	}
}
