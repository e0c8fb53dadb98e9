package httpx_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/arr-dev/arr/readapi/httpx"
)

// TestServeNosniff: every response of a served engine carries
// X-Content-Type-Options: nosniff, including the ones gin writes before
// any middleware (a trailing-slash redirect) and the router's errors.
func TestServeNosniff(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	h := httpx.Serve(testEngine(t, &logs))
	for _, tc := range []struct {
		name, method, path string
		status             int
	}{
		{"a route", "GET", "/ok", 200},
		{"a redirect of the router", "GET", "/ok/", http.StatusMovedPermanently},
		{"the router's 404", "GET", "/nothing", 404},
		{"the router's 405", "POST", "/ok", 405},
		{"an error of the responder", "GET", "/bug", 500},
		{"a panic", "GET", "/panic", 500},
		{"healthz", "GET", "/healthz", 200},
		{"metrics", "GET", "/metrics", 200},
		{"openapi", "GET", "/openapi.json", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
			if w.Code != tc.status || w.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("%s %s: %d, X-Content-Type-Options %q; want %d and nosniff", tc.method, tc.path, w.Code, w.Header().Get("X-Content-Type-Options"), tc.status)
			}
		})
	}
}
