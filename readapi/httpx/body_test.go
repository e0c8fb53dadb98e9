package httpx_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/httpx"
)

// bodyServer serves an engine with a body limit of 64 bytes and a body
// timeout of 500 ms on loopback: POST /echo reads the body and answers
// its length, POST /keyed refuses with a 401 before reading it.
func bodyServer(t *testing.T) string {
	t.Helper()
	gin.SetMode(gin.TestMode)
	fail := func(c *gin.Context, err error) {
		p := httpx.ProblemFor(c, err)
		c.Abort()
		c.JSON(p.Status, gin.H{"error": gin.H{"status": p.Status, "code": p.Code, "message": p.Message}})
	}
	e, err := httpx.NewEngine(httpx.Base{
		Service: "test", Fail: fail, OpenAPI: []byte(`{}`), Logger: slog.New(slog.DiscardHandler),
		MaxBodyBytes: 64, BodyTimeout: 500 * time.Millisecond,
		Health: func(ctx context.Context) (int, any) { return http.StatusOK, gin.H{"status": "ok"} },
	})
	if err != nil {
		t.Fatal(err)
	}
	e.POST("/echo", httpx.Handle(fail, func(c *gin.Context) error {
		b, err := io.ReadAll(c.Request.Body)
		if err != nil {
			return err
		}
		// After the body, the connection has no deadline: a slow
		// answer (a stream) is not cut off.
		time.Sleep(700 * time.Millisecond)
		c.JSON(http.StatusOK, gin.H{"read": len(b)})
		return nil
	}))
	e.POST("/json", httpx.Handle(fail, func(c *gin.Context) error {
		var v map[string]any
		if err := json.NewDecoder(c.Request.Body).Decode(&v); err != nil {
			if httpx.IsBodyError(err) {
				return err
			}
			return domain.Invalid("invalid_json", "", "not JSON: %v", err)
		}
		c.JSON(http.StatusOK, v)
		return nil
	}))
	e.POST("/keyed", httpx.Handle(fail, func(c *gin.Context) error {
		return &domain.Error{Kind: domain.ErrUnauthenticated, Code: "missing_api_key", Message: "no API key"}
	}))
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// rawPost writes a request head declaring length body bytes and then
// sent, and reads the answer (at most 10 s).
func rawPost(t *testing.T, addr, path string, length int, sent string) (*http.Response, map[string]any, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	start := time.Now()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n%s", path, addr, length, sent)
	_ = conn.SetReadDeadline(start.Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("POST %s: no answer: %v", path, err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp, body, time.Since(start)
}

func codeOf(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// TestRequestBodies: a body that stops arriving is a 408 after the body
// timeout, never an outage; a body over the limit is a 413 whether its
// length is declared or not; an error answered before the body is read
// goes out at once and closes the connection; a body read in time leaves
// the connection without a deadline for a slow answer.
func TestRequestBodies(t *testing.T) {
	addr := bodyServer(t)
	t.Run("a body that stops is 408", func(t *testing.T) {
		resp, body, took := rawPost(t, addr, "/echo", 40, `{"q":`)
		if resp.StatusCode != http.StatusRequestTimeout || codeOf(body) != "request_timeout" || !resp.Close || took > 5*time.Second {
			t.Fatalf("%d %v (closed %v) after %s; want 408 request_timeout and the connection closed", resp.StatusCode, body, resp.Close, took)
		}
	})
	t.Run("a JSON reader tells a slow body from bad JSON", func(t *testing.T) {
		resp, body, _ := rawPost(t, addr, "/json", 40, `{"q":`)
		if resp.StatusCode != http.StatusRequestTimeout || codeOf(body) != "request_timeout" {
			t.Fatalf("%d %v; want 408 request_timeout, not invalid_json", resp.StatusCode, body)
		}
		resp, body, _ = rawPost(t, addr, "/json", 5, `{"q":`)
		if resp.StatusCode != http.StatusBadRequest || codeOf(body) != "invalid_json" {
			t.Fatalf("%d %v; want 400 invalid_json", resp.StatusCode, body)
		}
	})
	t.Run("a 401 before the body goes out at once", func(t *testing.T) {
		resp, body, took := rawPost(t, addr, "/keyed", 60, `{"q":`)
		if resp.StatusCode != http.StatusUnauthorized || !resp.Close || took > 400*time.Millisecond {
			t.Fatalf("%d %v (closed %v) after %s; want 401 before the body timeout, the connection closed", resp.StatusCode, body, resp.Close, took)
		}
	})
	t.Run("a declared length over the limit is 413 at once", func(t *testing.T) {
		resp, body, took := rawPost(t, addr, "/echo", 65, `{"q":`)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || codeOf(body) != "body_too_large" || took > 400*time.Millisecond {
			t.Fatalf("%d %v after %s; want 413 body_too_large at once", resp.StatusCode, body, took)
		}
	})
	t.Run("a chunked body over the limit is 413", func(t *testing.T) {
		resp, err := http.Post("http://"+addr+"/echo", "application/json", io.MultiReader(strings.NewReader(strings.Repeat("x", 65))))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || codeOf(body) != "body_too_large" {
			t.Fatalf("%d %v; want 413 body_too_large", resp.StatusCode, body)
		}
	})
	t.Run("a body in time is served, and the answer may take longer than the body timeout", func(t *testing.T) {
		resp, err := http.Post("http://"+addr+"/echo", "application/json", strings.NewReader(`{"q":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		if resp.StatusCode != http.StatusOK || body["read"] != float64(9) || resp.Close {
			t.Fatalf("%d %v (closed %v); want 200 with the 9 bytes read, the connection kept", resp.StatusCode, body, resp.Close)
		}
	})
}

// TestRequestTimeoutStatus: the body timeout's error is a 408 with no
// Retry-After, however it is wrapped.
func TestRequestTimeoutStatus(t *testing.T) {
	err := fmt.Errorf("reading the body: %w", httpx.RequestTimeout(30*time.Second))
	if p := httpx.ProblemOf(err); p.Status != http.StatusRequestTimeout || p.Code != "request_timeout" || p.RetryAfter != 0 || !strings.Contains(p.Message, "30s") {
		t.Fatalf("ProblemOf(%v) = %+v, want 408 request_timeout naming the timeout", err, p)
	}
	if httpx.IsBodyError(errors.New("invalid character 'x'")) || !httpx.IsBodyError(fmt.Errorf("decoding: %w", &http.MaxBytesError{Limit: 1})) {
		t.Fatalf("IsBodyError tells a JSON error and a MaxBytesError apart wrongly")
	}
}
