package httpx

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// Serve returns a service's HTTP handler: the engine under the headers
// every response of every service carries, whatever answers it — a route,
// an error of the service's responder, the router's own 404, 405 and
// trailing-slash redirects (which gin writes before any engine
// middleware runs), static assets, pages, /healthz and /metrics. It is
// the one place those headers are set:
//
//   - X-Content-Type-Options: nosniff, so that no browser reads a JSON
//     body, an error or a user's upload as HTML or script.
//
// Only the responses net/http writes before a handler runs (a malformed
// request line, headers over ServerMaxHeaderBytes) go out without it.
// Safe for concurrent use.
func Serve(e *gin.Engine) http.Handler { return served{e} }

// served is an engine under the headers of every response; its routes
// are the engine's (Routes).
type served struct{ *gin.Engine }

func (s served) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	s.Engine.ServeHTTP(w, r)
}
