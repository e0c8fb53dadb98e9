package main

import (
	"fmt"
	"strings"

	"github.com/arr-dev/arr/adapters/tracing"
)

// TracesConfig is the OpenTelemetry part of Config: the standard OTEL_*
// variables arr reads (as flags too), parsed strictly like every setting.
type TracesConfig struct {
	Disabled       string
	Exporter       string
	Protocol       string
	TracesProtocol string
	Endpoint       string
	TracesEndpoint string
	Headers        string
	TracesHeaders  string
	ServiceName    string
	ResourceAttrs  string
	Sampler        string
	SamplerArg     string
}

func (c *Config) traceSettings() []setting {
	o := &c.Traces
	return []setting{
		{env: "OTEL_SDK_DISABLED", str: &o.Disabled, def: "false", choices: []string{"true", "false"}, help: "true turns OpenTelemetry traces off whatever the other OTEL_* variables say"},
		{env: "OTEL_TRACES_EXPORTER", str: &o.Exporter, help: "otlp exports traces over OTLP, none turns them off; empty: otlp when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, none otherwise (traces are off and cost nothing unless asked for)"},
		{env: "OTEL_EXPORTER_OTLP_PROTOCOL", str: &o.Protocol, def: tracing.ProtocolHTTP, choices: tracing.Protocols(), help: "OTLP protocol of the trace export: http/protobuf or grpc"},
		{env: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", str: &o.TracesProtocol, help: "OTLP protocol of traces (http/protobuf or grpc); empty: OTEL_EXPORTER_OTLP_PROTOCOL"},
		{env: "OTEL_EXPORTER_OTLP_ENDPOINT", str: &o.Endpoint, help: "base URL of the OTLP receiver (http://127.0.0.1:4318 for http/protobuf, whose traces go to /v1/traces under it; http://127.0.0.1:4317 for grpc); setting it turns traces on"},
		{env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", str: &o.TracesEndpoint, help: "URL traces are exported to, used as is (wins over OTEL_EXPORTER_OTLP_ENDPOINT); setting it turns traces on"},
		{env: "OTEL_EXPORTER_OTLP_HEADERS", str: &o.Headers, secret: true, help: "headers sent with every trace export, key=value pairs separated by commas, values percent-encoded (e.g. an API key of the tracing backend: never logged)"},
		{env: "OTEL_EXPORTER_OTLP_TRACES_HEADERS", str: &o.TracesHeaders, secret: true, help: "headers of the trace export in the same form; a header named in both wins here (never logged)"},
		{env: "OTEL_SERVICE_NAME", str: &o.ServiceName, help: "service.name of the traces' resource; empty: the service.name of OTEL_RESOURCE_ATTRIBUTES, else arr"},
		{env: "OTEL_RESOURCE_ATTRIBUTES", str: &o.ResourceAttrs, help: "more resource attributes of the traces, key=value pairs separated by commas (deployment.environment.name=prod,host.name=gw-1)"},
		{env: "OTEL_TRACES_SAMPLER", str: &o.Sampler, def: "parentbased_always_on", choices: tracing.Samplers(), help: "which traces are kept: always_on, always_off, traceidratio, or parentbased_… (follow the caller's traceparent sampled flag, else the rule)"},
		{env: "OTEL_TRACES_SAMPLER_ARG", str: &o.SamplerArg, help: "the ratio (0 to 1) of traces kept by the traceidratio samplers; empty: 1"},
	}
}

// tracing is the tracer provider's configuration; Validate has passed.
func (o TracesConfig) tracing(version string) tracing.Config {
	cfg := tracing.Config{
		Exporter: o.Exporter, Disabled: o.Disabled == "true", Protocol: o.Protocol,
		Endpoint: o.Endpoint, TracesEndpoint: o.TracesEndpoint,
		ServiceName: o.ServiceName, ServiceVersion: version, Sampler: o.Sampler, SamplerArg: o.SamplerArg,
	}
	if o.TracesProtocol != "" {
		cfg.Protocol = o.TracesProtocol
	}
	cfg.Headers, _ = tracing.ParseList(o.Headers)
	traces, _ := tracing.ParseList(o.TracesHeaders)
	for k, v := range traces {
		cfg.Headers[k] = v
	}
	cfg.Attributes, _ = tracing.ParseAttributes(o.ResourceAttrs)
	return cfg
}

// validate checks the OTEL_* settings the table cannot (parse has run).
func (o TracesConfig) validate(c *Config) []error {
	var errs []error
	add := func(env, want string) {
		errs = append(errs, &configError{env: env, value: c.rawOf(env), want: want})
	}
	if o.Exporter != "" && o.Exporter != tracing.ExporterOTLP && o.Exporter != tracing.ExporterNone {
		add("OTEL_TRACES_EXPORTER", "otlp or none (or empty)")
	}
	if o.TracesProtocol != "" && o.TracesProtocol != tracing.ProtocolHTTP && o.TracesProtocol != tracing.ProtocolGRPC {
		add("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf or grpc (or empty)")
	}
	for _, env := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		if v := c.rawOf(env); v != "" && tracing.CheckEndpoint(v) != nil {
			add(env, "an absolute http(s) URL without user, query or fragment, like http://127.0.0.1:4318")
		}
	}
	for env, v := range map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": o.Headers, "OTEL_EXPORTER_OTLP_TRACES_HEADERS": o.TracesHeaders} {
		if _, err := tracing.ParseList(v); err != nil {
			// The headers may hold a backend's key: never shown.
			errs = append(errs, fmt.Errorf("%s (flag --%s): want key=value pairs separated by commas, values percent-encoded (the value is not shown)", env, flagName(env)))
		}
	}
	if _, err := tracing.ParseAttributes(o.ResourceAttrs); err != nil {
		add("OTEL_RESOURCE_ATTRIBUTES", strings.TrimPrefix(err.Error(), "tracing: "))
	}
	if _, err := tracing.NewSampler(o.Sampler, o.SamplerArg); err != nil && strings.Contains(err.Error(), "argument") {
		add("OTEL_TRACES_SAMPLER_ARG", "a ratio from 0 to 1, like 0.25")
	}
	return errs
}
