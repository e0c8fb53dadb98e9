package httpx

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// traceRequests starts the server span of each request, a child of the
// caller's W3C trace context (traceparent) when it sends one. The span is
// named by the route template ("POST /v1/keys/:id"), never the path with
// its ids, and carries the method, the route, the status and the service:
// never a header's value, the query string or the body.
func traceRequests(service string, tracer trace.Tracer) gin.HandlerFunc {
	prop := propagation.TraceContext{}
	svc := attribute.String("arr.service", service)
	return func(c *gin.Context) {
		r := c.Request
		route := c.FullPath()
		method := knownMethod(r.Method)
		name := method
		if method == "_OTHER" {
			name = "HTTP"
		}
		if route != "" {
			name += " " + route
		}
		attrs := []attribute.KeyValue{svc, semconv.HTTPRequestMethodKey.String(method), semconv.URLScheme(scheme(r))}
		if route != "" {
			attrs = append(attrs, semconv.HTTPRoute(route))
		}
		ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		c.Request = r.WithContext(ctx)
		c.Next()
		status := c.Writer.Status()
		span.SetAttributes(semconv.HTTPResponseStatusCode(status))
		if status >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, http.StatusText(status))
			span.SetAttributes(semconv.ErrorTypeKey.String(http.StatusText(status)))
		}
	}
}

// knownMethod is the request's method, or _OTHER for one HTTP does not
// define (a client's invention never becomes an attribute).
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}
