package upstream

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/arr-dev/arr/adapters/tracing"
	"github.com/arr-dev/arr/domain/routing"
)

// startAttempt starts the client span of one upstream call of operation
// op (gen_ai.operation.name: "chat", "embeddings"), named as the GenAI
// semantic conventions name it ("chat gpt-4o-mini"), with the provider,
// the model asked for, the catalog model and tier, and the upstream's host
// and port: never its key, the body or a header. With no tracer it starts
// nothing (nil span); end it with endAttempt.
func (c *Client) startAttempt(ctx context.Context, op string, m routing.Model, stream bool) (context.Context, trace.Span) {
	if c.cfg.Tracer == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameKey.String(op), semconv.GenAIProviderNameKey.String(tracing.GenAIProvider(m.Vendor)),
		semconv.GenAIRequestModel(m.UpstreamModel), attribute.String("arr.model", m.ID),
		attribute.String("arr.routing.tier", m.Tier), attribute.Bool("arr.stream", stream),
	}
	if u, err := url.Parse(m.BaseURL); err == nil && u.Hostname() != "" {
		attrs = append(attrs, semconv.ServerAddress(u.Hostname()))
		if p, err := strconv.Atoi(u.Port()); err == nil {
			attrs = append(attrs, semconv.ServerPort(p))
		}
	}
	return c.cfg.Tracer.Start(ctx, op+" "+m.UpstreamModel, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endAttempt ends the span of a call: at once for a failure or a whole
// reply, when the stream is closed for a stream (a stream that breaks off
// marks it failed, Stream.Next).
func endAttempt(span trace.Span, resp *Response, err error) {
	if err != nil {
		var ue *Error
		typ := "error"
		if errors.As(err, &ue) {
			switch {
			case ue.Status == http.StatusOK:
				typ = "reply_unreadable"
			case ue.Status != 0:
				span.SetAttributes(semconv.HTTPResponseStatusCode(ue.Status))
				typ = strconv.Itoa(ue.Status)
			case errors.Is(ue.Err, ErrBreakerOpen):
				typ = "breaker_open"
			case errors.Is(ue.Err, ErrNotConfigured):
				typ = "not_configured"
			case errors.Is(ue.Err, context.DeadlineExceeded):
				typ = "timeout"
			case errors.Is(ue.Err, context.Canceled):
				typ = "canceled"
			default:
				var ne net.Error
				if errors.As(ue.Err, &ne) && ne.Timeout() {
					typ = "timeout"
				} else {
					typ = "no_response"
				}
			}
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(typ))
		span.SetStatus(codes.Error, typ)
		span.End()
		return
	}
	span.SetAttributes(semconv.HTTPResponseStatusCode(resp.Status))
	if resp.Stream == nil {
		span.End()
		return
	}
	resp.Stream.span = span
}

// inject puts the W3C trace context of ctx (the attempt's span) on the
// upstream request, so the upstream's own traces join arr's.
func (c *Client) inject(ctx context.Context, h http.Header) {
	if c.cfg.Tracer != nil {
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
	}
}
