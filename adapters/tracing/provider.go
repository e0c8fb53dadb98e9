package tracing

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Scope is the instrumentation scope of arr's spans.
const Scope = "github.com/arr-dev/arr"

// Provider is the process's tracer provider: spans are batched and
// exported over OTLP. A nil *Provider is tracing turned off. Safe for
// concurrent use.
type Provider struct {
	tp       *sdktrace.TracerProvider
	endpoint string
	protocol string
}

// New builds the provider of cfg, or returns nil when cfg turns traces
// off. Building dials nothing: the exporter connects on its first export.
func New(ctx context.Context, cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.On() {
		return nil, nil
	}
	sampler, _ := NewSampler(cfg.Sampler, cfg.SamplerArg) // checked by Validate
	p := &Provider{protocol: cfg.Protocol}
	if p.protocol == "" {
		p.protocol = ProtocolHTTP
	}
	exp, err := p.exporter(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(cfg.resource()), sdktrace.WithSampler(sampler))
	return p, nil
}

// resource is the process's resource: the attributes given, service.name
// (ServiceName, else the attributes' own, else arr) and service.version.
func (c Config) resource() *resource.Resource {
	attrs := append([]attribute.KeyValue(nil), c.Attributes...)
	name := c.ServiceName
	for _, kv := range c.Attributes {
		if kv.Key == semconv.ServiceNameKey && name == "" {
			name = kv.Value.AsString()
		}
	}
	if name == "" {
		name = "arr"
	}
	attrs = append(attrs, semconv.ServiceName(name))
	if c.ServiceVersion != "" {
		attrs = append(attrs, semconv.ServiceVersion(c.ServiceVersion))
	}
	return resource.NewWithAttributes(semconv.SchemaURL, attrs...)
}

// exporter builds the OTLP exporter of p's protocol. The endpoint is
// passed explicitly, so a flag wins over the variable as for every arr
// setting; what arr does not parse (certificates, timeouts, compression)
// the exporter reads from OTEL_EXPORTER_OTLP_* itself.
func (p *Provider) exporter(ctx context.Context, cfg Config) (sdktrace.SpanExporter, error) {
	if p.protocol == ProtocolGRPC {
		var opts []otlptracegrpc.Option
		p.endpoint = "http://localhost:4317"
		switch {
		case cfg.TracesEndpoint != "":
			p.endpoint = cfg.TracesEndpoint
		case cfg.Endpoint != "":
			p.endpoint = cfg.Endpoint
		}
		opts = append(opts, otlptracegrpc.WithEndpointURL(p.endpoint))
		if len(cfg.Headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(cfg.Headers))
		}
		exp, err := otlptracegrpc.New(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("tracing: the OTLP/gRPC exporter: %w", err)
		}
		return exp, nil
	}
	p.endpoint = "http://localhost:4318/v1/traces"
	switch {
	case cfg.TracesEndpoint != "":
		p.endpoint = cfg.TracesEndpoint
	case cfg.Endpoint != "":
		p.endpoint = strings.TrimSuffix(cfg.Endpoint, "/") + "/v1/traces"
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(p.endpoint)}
	if len(cfg.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: the OTLP/HTTP exporter: %w", err)
	}
	return exp, nil
}

// Tracer returns arr's tracer, or nil when p is nil (tracing off).
func (p *Provider) Tracer() trace.Tracer {
	if p == nil {
		return nil
	}
	return p.tp.Tracer(Scope)
}

// Endpoint and Protocol say where the spans go (for the start log).
func (p *Provider) Endpoint() string { return p.endpoint }

// Protocol is the OTLP protocol of the export.
func (p *Provider) Protocol() string { return p.protocol }

// Shutdown exports the spans still buffered and stops the exporter,
// within ctx. A nil p has nothing to do.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.tp.Shutdown(ctx)
}
