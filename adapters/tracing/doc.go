// Package tracing builds arr's OpenTelemetry tracer provider from the
// standard OTEL_* settings (parsed strictly by cmd/arr and handed over as
// a Config): an OTLP exporter over HTTP/protobuf or gRPC, the resource
// (service name and OTEL_RESOURCE_ATTRIBUTES) and the sampler. With the
// exporter off, New returns a nil *Provider, whose Tracer is nil: every
// instrumented package skips its spans on a nil tracer, so tracing that is
// off costs no allocation on the request path.
//
// The instrumented packages (readapi/httpx, adapters/upstream,
// commands/complete, commands) take a trace.Tracer in their Config and
// carry the W3C trace context (traceparent) with
// propagation.TraceContext: it comes in with a request and goes out with
// each upstream call. No attribute ever holds a prompt, a completion, a
// key or a header's value.
package tracing
