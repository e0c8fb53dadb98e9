package llm

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// startSpan starts the client span of one completion ("chat auto"): the
// model asked for and the endpoint's host, never the messages or the key.
// With no tracer it starts nothing (nil span).
func (c *Client) startSpan(ctx context.Context, r Request) (context.Context, trace.Span) {
	if c.cfg.Tracer == nil {
		return ctx, nil
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.GenAIOperationNameChat, semconv.GenAIRequestModel(r.Model))}
	if u, err := url.Parse(c.cfg.BaseURL); err == nil {
		opts = append(opts, trace.WithAttributes(semconv.ServerAddress(u.Hostname())))
		if p, err := strconv.Atoi(u.Port()); err == nil {
			opts = append(opts, trace.WithAttributes(semconv.ServerPort(p)))
		}
	}
	return c.cfg.Tracer.Start(ctx, "chat "+r.Model, opts...)
}

// endSpan ends the span with the model that answered and the usage, or as
// failed (error.type "unavailable": the cause's text could quote the
// endpoint's error body).
func endSpan(span trace.Span, resp Response, err error) {
	defer span.End()
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String("unavailable"))
		span.SetStatus(codes.Error, "unavailable")
		return
	}
	span.SetAttributes(semconv.GenAIResponseModel(resp.Model),
		semconv.GenAIUsageInputTokens(int(resp.PromptTokens)), semconv.GenAIUsageOutputTokens(int(resp.CompletionTokens)))
}

// inject puts the W3C trace context of ctx on the request.
func (c *Client) inject(ctx context.Context, h http.Header) {
	if c.cfg.Tracer != nil {
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
	}
}
