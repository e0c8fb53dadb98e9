package httpx_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/httpx"
)

// TestHandle: the wrapper writes a returned error once, through the
// service's responder, and only when nothing was written yet.
func TestHandle(t *testing.T) {
	gin.SetMode(gin.TestMode)
	errLate := errors.New("the cause after the body")
	tests := []struct {
		name     string
		chain    []httpx.Handler // run through Handle, in order, before the last handler
		last     httpx.Handler
		status   int
		body     string
		failures int    // calls of the responder
		recorded string // the error on c.Errors after the chain ("" for none)
		lastRan  bool
	}{
		{
			name:   "nil writes nothing",
			last:   func(c *gin.Context) error { return nil },
			status: http.StatusOK, body: "", lastRan: true,
		},
		{
			name:   "a body and nil",
			last:   func(c *gin.Context) error { c.String(http.StatusCreated, "made"); return nil },
			status: http.StatusCreated, body: "made", lastRan: true,
		},
		{
			name:   "an error before any write is the responder's",
			last:   func(c *gin.Context) error { return domain.NotFound("list_not_found", "no list") },
			status: http.StatusNotFound, body: "fail: list_not_found", failures: 1, recorded: "list_not_found: no list", lastRan: true,
		},
		{
			name: "an error after a write is recorded, not written",
			last: func(c *gin.Context) error {
				c.String(http.StatusOK, "partial page")
				return errLate
			},
			status: http.StatusOK, body: "partial page", recorded: errLate.Error(), lastRan: true,
		},
		{
			name:   "a middleware's nil lets the chain go on",
			chain:  []httpx.Handler{func(c *gin.Context) error { c.Header("X-Seen", "1"); return nil }},
			last:   func(c *gin.Context) error { c.String(http.StatusOK, "served"); return nil },
			status: http.StatusOK, body: "served", lastRan: true,
		},
		{
			name: "a middleware's error stops the chain",
			chain: []httpx.Handler{func(c *gin.Context) error {
				c.Header("WWW-Authenticate", `Bearer realm="test"`)
				return &domain.Error{Kind: domain.ErrUnauthenticated, Code: "missing_api_key", Message: "no key"}
			}},
			last:   func(c *gin.Context) error { c.String(http.StatusOK, "served"); return nil },
			status: http.StatusUnauthorized, body: "fail: missing_api_key", failures: 1, recorded: "missing_api_key: no key",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			failures := 0
			fail := func(c *gin.Context, err error) {
				failures++
				p := httpx.ProblemFor(c, err)
				c.String(p.Status, "fail: "+p.Code)
			}
			var recorded []string
			lastRan := false
			e := gin.New()
			handlers := []gin.HandlerFunc{func(c *gin.Context) {
				c.Next()
				recorded = c.Errors.Errors()
			}}
			for _, h := range tc.chain {
				handlers = append(handlers, httpx.Handle(fail, h))
			}
			handlers = append(handlers, httpx.Handle(fail, func(c *gin.Context) error {
				lastRan = true
				return tc.last(c)
			}))
			e.GET("/", handlers...)
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			if rec.Code != tc.status || rec.Body.String() != tc.body {
				t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body, tc.status, tc.body)
			}
			if failures != tc.failures {
				t.Fatalf("the responder ran %d times, want %d", failures, tc.failures)
			}
			if lastRan != tc.lastRan {
				t.Fatalf("the last handler ran: %v, want %v", lastRan, tc.lastRan)
			}
			want := []string{}
			if tc.recorded != "" {
				want = []string{tc.recorded}
			}
			if len(recorded) != len(want) || len(want) == 1 && recorded[0] != want[0] {
				t.Fatalf("c.Errors = %q, want %q", recorded, want)
			}
		})
	}
}
