package httpx

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/arr-dev/arr/domain"
)

// Base configures what every service's engine has.
type Base struct {
	Service string
	Version string
	Logger  *slog.Logger
	Metrics *Metrics
	// Gatherer serves /metrics; nil serves an empty registry.
	Gatherer prometheus.Gatherer
	// OpenAPI is the service's OpenAPI document, served at /openapi.json.
	OpenAPI []byte
	// MaxBodyBytes caps request bodies (413 over it). Default 1 MiB.
	MaxBodyBytes int64
	// BodyTimeout is how long a request body may take to arrive, from
	// the moment the engine starts on the request (408 after it; the
	// request is not counted against a quota). Default
	// DefaultBodyTimeout.
	BodyTimeout time.Duration
	// WriteTimeout is how long a response may take to be written, from
	// its first byte (the connection's write deadline, set per response
	// through http.ResponseController): a client that stops reading its
	// answer is cut off after it, so it holds no connection or goroutine
	// for longer. Zero sets none (the gateway streams answers for as long
	// as their own limits allow).
	WriteTimeout time.Duration
	// Bodies, if set, bounds the bytes of request bodies the service's
	// handlers hold, every route's (bodygate.go).
	Bodies *BodyGate
	// MaxHeaderBytes caps the request line and headers (431 over it).
	// Default DefaultMaxHeaderBytes; the http.Server must allow more
	// (ServerMaxHeaderBytes).
	MaxHeaderBytes int
	// Health reports the service's health: its HTTP status and body.
	Health func(ctx context.Context) (int, any)
	// Fail is the service's error responder.
	Fail func(c *gin.Context, err error)
	// Public runs before /openapi.json (the records service puts its per-IP
	// limit here); /healthz and /metrics are for operators and never limited.
	Public []gin.HandlerFunc
	// TrustedProxies are the peers (addresses and prefixes, see
	// ParseTrustedProxies) whose X-Forwarded-For, X-Real-IP,
	// X-Forwarded-Proto and X-Forwarded-Host are believed: for
	// gin.Context.ClientIP (per-IP limits), IsTLS and RequestHost. Empty
	// trusts nobody: the client is the TCP peer and the headers are ignored.
	TrustedProxies []netip.Prefix
	// Tracer starts each request's server span (trace.go); nil traces
	// nothing and costs nothing.
	Tracer trace.Tracer
}

// Validate checks the required fields.
func (b *Base) Validate() error {
	if b.Service == "" || b.Fail == nil || b.Health == nil || len(b.OpenAPI) == 0 {
		return fmt.Errorf("httpx: service %q needs Service, Fail, Health and OpenAPI", b.Service)
	}
	if b.Logger == nil {
		b.Logger = slog.New(slog.DiscardHandler)
	}
	if b.Metrics == nil {
		b.Metrics = NewMetrics(nil)
	}
	if b.Gatherer == nil {
		b.Gatherer = prometheus.NewRegistry()
	}
	if b.MaxBodyBytes <= 0 {
		b.MaxBodyBytes = 1 << 20
	}
	if b.MaxHeaderBytes <= 0 {
		b.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if b.BodyTimeout <= 0 {
		b.BodyTimeout = DefaultBodyTimeout
	}
	return nil
}

// NewEngine returns a gin engine with the shared middleware and the
// /healthz, /metrics and /openapi.json routes.
func NewEngine(b Base) (*gin.Engine, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.ContextWithFallback = true
	if err := trustProxies(e, b.TrustedProxies); err != nil {
		return nil, err
	}
	if b.Tracer != nil {
		e.Use(traceRequests(b.Service, b.Tracer))
	}
	e.Use(markTrustedPeer(b.TrustedProxies), requestID(), b.Metrics.middleware(b.Service), accessLog(b.Service, b.Logger), recoverer(b.Logger, b.Fail),
		limitHeaders(b.MaxHeaderBytes, b.Fail), limitBody(b.MaxBodyBytes, b.BodyTimeout, b.Bodies, b.Fail))
	if b.WriteTimeout > 0 {
		e.Use(limitWrite(b.WriteTimeout))
	}
	e.NoRoute(Handle(b.Fail, func(c *gin.Context) error {
		return domain.NotFound("route_not_found", "no route %s %s; see /openapi.json", c.Request.Method, c.Request.URL.Path)
	}))
	e.NoMethod(Handle(b.Fail, func(c *gin.Context) error {
		return &domain.Error{Kind: errMethod, Code: "method_not_allowed", Message: fmt.Sprintf("%s is not allowed on %s; see /openapi.json", c.Request.Method, c.Request.URL.Path)}
	}))
	e.GET("/healthz", func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 3*time.Second)
		defer cancel()
		status, body := b.Health(ctx)
		c.JSON(status, body)
	})
	e.GET("/metrics", gin.WrapH(promhttp.HandlerFor(b.Gatherer, promhttp.HandlerOpts{})))
	e.GET("/openapi.json", append(b.Public[:len(b.Public):len(b.Public)], func(c *gin.Context) {
		c.Data(http.StatusOK, "application/json", b.OpenAPI)
	})...)
	return e, nil
}

// trustProxies configures gin's client-IP rules: forwarding headers count
// only from the trusted proxies (gin's default trusts every peer), and no
// platform header (CF-Connecting-IP and the like) is believed, since any
// client can send one.
func trustProxies(e *gin.Engine, trusted []netip.Prefix) error {
	var cidrs []string
	for _, p := range trusted {
		cidrs = append(cidrs, p.String())
	}
	if err := e.SetTrustedProxies(cidrs); err != nil { // nil: trust nobody
		return fmt.Errorf("httpx: trusted proxies: %w", err)
	}
	e.TrustedPlatform = ""
	e.ForwardedByClientIP = true
	e.RemoteIPHeaders = []string{"X-Forwarded-For", "X-Real-IP"}
	return nil
}

// errMethod is the kind of a 405: a Problem with status 405.
var errMethod = methodNotAllowed{}

type methodNotAllowed struct{}

func (methodNotAllowed) Error() string { return "method not allowed" }

func requestID() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader("X-Request-Id")
		if !saneID(id) {
			id = uuid.NewString()
		}
		c.Set("request_id", id)
		c.Header("X-Request-Id", id)
		c.Next()
	}
}

func saneID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// accessLog logs one line per request: never headers, never the query
// string, so no key or question text reaches the log. A 5xx is logged at
// error level with its cause: the errors the responder recorded (see
// ProblemFor). A request whose client hung up (ClientClosed) says so
// (hangup=…), at info level: status 499 when it hung up before the
// answer (see respond), the status sent when it hung up during a success
// (a stream cut short). An error status is its own story (a body that
// timed out cancels the request's context too). An answer the handler
// cut off by panicking (http.ErrAbortHandler, passed on by the
// recoverer) is logged too, in a deferred call, with cut=…; the panic
// goes on.
func accessLog(service string, log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		ctx := c.Request.Context() // net/http's: later ones are its children
		returned := false
		defer func() { logRequest(ctx, c, service, log, start, !returned) }()
		c.Next()
		returned = true
	}
}

// logRequest writes the access log line of c (accessLog); cut says the
// handler did not return but panicked, the connection being aborted.
func logRequest(ctx context.Context, c *gin.Context, service string, log *slog.Logger, start time.Time, cut bool) {
	level, status := slog.LevelInfo, c.Writer.Status()
	attrs := []slog.Attr{slog.String("service", service), slog.String("method", c.Request.Method),
		slog.String("path", c.Request.URL.Path), slog.Int("status", status),
		slog.Int("bytes", c.Writer.Size()), slog.Duration("took", time.Since(start)),
		slog.String("request_id", c.GetString("request_id"))}
	if status >= http.StatusInternalServerError {
		level = slog.LevelError
		cause := "no error was recorded for this response"
		if len(c.Errors) > 0 {
			cause = strings.Join(c.Errors.Errors(), "; ")
		}
		attrs = append(attrs, slog.String("err", cause))
	}
	if ClientClosed(ctx) && (status == StatusClientClosedRequest || status < http.StatusBadRequest) {
		attrs = append(attrs, slog.String("hangup", "the client closed the request before its answer was complete"))
	}
	if cut {
		attrs = append(attrs, slog.String("cut", "the answer was cut off: the connection was aborted before its end"))
	}
	log.LogAttrs(ctx, level, "http request", attrs...)
}

func recoverer(log *slog.Logger, fail func(*gin.Context, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				log.Error("panic in handler", "panic", fmt.Sprint(r), "request_id", c.GetString("request_id"), "stack", string(debug.Stack()))
				respond(c, fail, fmt.Errorf("panic: %v", r))
			}
		}()
		c.Next()
	}
}

// ErrTooLarge is the kind of a 413.
var ErrTooLarge = tooLarge{}

type tooLarge struct{}

func (tooLarge) Error() string { return "request body too large" }

// TooLarge returns the error for a body over limit bytes.
func TooLarge(limit int64) error {
	return &domain.Error{Kind: ErrTooLarge, Code: "body_too_large", Message: fmt.Sprintf("the request body is over the limit of %d bytes", limit)}
}
