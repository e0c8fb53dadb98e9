package httpx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arr-dev/arr/readapi/httpx"
)

// testEngine is a service engine whose responder writes the records
// shape, with routes that fail in the ways a handler can.
func testEngine(t testing.TB, logs *bytes.Buffer) *gin.Engine {
	t.Helper()
	gin.SetMode(gin.TestMode)
	fail := func(c *gin.Context, err error) {
		p := httpx.ProblemFor(c, err)
		c.Abort()
		c.JSON(p.Status, gin.H{"error": gin.H{"status": p.Status, "code": p.Code, "message": p.Message}})
	}
	e, err := httpx.NewEngine(httpx.Base{
		Service: "test", Fail: fail, OpenAPI: []byte(`{}`),
		Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		Health: func(ctx context.Context) (int, any) { return http.StatusOK, gin.H{"status": "ok"} },
	})
	if err != nil {
		t.Fatal(err)
	}
	e.GET("/ok", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"ok": true}) })
	e.GET("/bug", func(c *gin.Context) { fail(c, fmt.Errorf("rendering parcels: %w", errors.New("the cause of the 500"))) })
	e.GET("/db-down", func(c *gin.Context) {
		fail(c, fmt.Errorf("loading parcels: %w", &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}))
	})
	e.GET("/panic", func(c *gin.Context) { panic("the cause of the panic") })
	return e
}

type errorBody struct {
	Error struct {
		Status  int    `json:"status"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func serve(t testing.TB, h http.Handler, path string, header http.Header) (*httptest.ResponseRecorder, errorBody) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for k, vs := range header {
		req.Header[k] = vs
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var b errorBody
	if rec.Code >= 400 {
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("GET %s: %d with Content-Type %q, want JSON: %s", path, rec.Code, ct, rec.Body)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
			t.Fatalf("GET %s: %d body is not JSON: %v: %s", path, rec.Code, err, rec.Body)
		}
	}
	return rec, b
}

// TestEngineErrors: every failure is the responder's JSON; a 5xx is logged
// with its cause and the request id; a 503 carries Retry-After; headers
// over the limit are a 431.
func TestEngineErrors(t *testing.T) {
	big := http.Header{"X-Big": {strings.Repeat("a", 100<<10)}}
	many := http.Header{}
	for i := 0; i < 200; i++ {
		many.Add(fmt.Sprintf("X-Field-%d", i), strings.Repeat("b", 400))
	}
	tests := []struct {
		name       string
		path       string
		header     http.Header
		status     int
		code       string
		retryAfter string
		logged     string // a 5xx: what the access log must say
	}{
		{name: "served", path: "/ok", status: http.StatusOK},
		{name: "unknown error", path: "/bug", status: http.StatusInternalServerError, code: "internal_error", logged: "the cause of the 500"},
		{name: "panic", path: "/panic", status: http.StatusInternalServerError, code: "internal_error", logged: "the cause of the panic"},
		{name: "database down", path: "/db-down", status: http.StatusServiceUnavailable, code: "database_unavailable", retryAfter: "5", logged: "57P03"},
		{name: "one 100 KB header", path: "/ok", header: big, status: http.StatusRequestHeaderFieldsTooLarge, code: "headers_too_large"},
		{name: "80 KB in 200 headers", path: "/ok", header: many, status: http.StatusRequestHeaderFieldsTooLarge, code: "headers_too_large"},
		{name: "headers just under the limit", path: "/ok", header: http.Header{"X-Big": {strings.Repeat("a", 60<<10)}}, status: http.StatusOK},
		{name: "no route", path: "/nowhere", status: http.StatusNotFound, code: "route_not_found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			rec, body := serve(t, testEngine(t, &logs), tc.path, tc.header)
			if rec.Code != tc.status || body.Error.Code != tc.code {
				t.Fatalf("GET %s: %d %q, want %d %q: %s", tc.path, rec.Code, body.Error.Code, tc.status, tc.code, rec.Body)
			}
			if got := rec.Header().Get("Retry-After"); got != tc.retryAfter {
				t.Fatalf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			if tc.logged == "" {
				return
			}
			id := rec.Header().Get("X-Request-Id")
			var found bool
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var l struct {
					Msg       string `json:"msg"`
					Level     string `json:"level"`
					Status    int    `json:"status"`
					RequestID string `json:"request_id"`
					Err       string `json:"err"`
				}
				_ = json.Unmarshal([]byte(line), &l)
				if l.Msg == "http request" && l.Level == "ERROR" && l.Status == tc.status && l.RequestID == id && strings.Contains(l.Err, tc.logged) {
					found = true
				}
			}
			if id == "" || !found {
				t.Fatalf("no error-level access log line with request id %q and cause %q:\n%s", id, tc.logged, logs.String())
			}
		})
	}
}
