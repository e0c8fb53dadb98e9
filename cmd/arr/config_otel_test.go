package main

import (
	"strings"
	"testing"
)

// TestConfigTraces: the OTEL_* values arr cannot use are refused, each
// naming the variable and the accepted form (the headers' value, which may
// hold a backend's key, is never shown); good values make the tracer
// provider's configuration, off unless an endpoint or the exporter asks.
func TestConfigTraces(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, `OTEL_TRACES_EXPORTER="zipkin"`},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, `OTEL_EXPORTER_OTLP_PROTOCOL="http/json"`},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "thrift"}, `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="thrift"`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4318"}, `OTEL_EXPORTER_OTLP_ENDPOINT="127.0.0.1:4318"`},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://u:p@h:4318/v1/traces"}, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=`},
		{map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "api-key-without-equals-secret"}, "OTEL_EXPORTER_OTLP_HEADERS (flag --otel-exporter-otlp-headers): want key=value"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-without-equals-secret"}, "OTEL_EXPORTER_OTLP_TRACES_HEADERS (flag --otel-exporter-otlp-traces-headers): want key=value"},
		{map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "=x"}, `OTEL_RESOURCE_ATTRIBUTES="=x"`},
		{map[string]string{"OTEL_TRACES_SAMPLER": "sometimes"}, `OTEL_TRACES_SAMPLER="sometimes"`},
		{map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, `OTEL_TRACES_SAMPLER_ARG="2"`},
		{map[string]string{"OTEL_SDK_DISABLED": "yes"}, `OTEL_SDK_DISABLED="yes"`},
	} {
		_, err := configFrom(tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "want ") {
			t.Errorf("%v: got %v, want an error containing %q", tc.env, err, tc.want)
		}
		if strings.Contains(fmtErr(err), "without-equals-secret") {
			t.Errorf("a secret is shown in %q", err)
		}
	}
	cfg, err := configFrom(nil)
	if err != nil || cfg.Traces.tracing("v1").On() {
		t.Fatalf("the defaults: %v, traces on: %v", err, cfg.Traces.tracing("v1").On())
	}
	cfg, err = configFrom(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=a%20b,x-team=1", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-team=2", "OTEL_RESOURCE_ATTRIBUTES": "team=gw",
		"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"})
	if err != nil {
		t.Fatal(err)
	}
	tc := cfg.Traces.tracing("v1")
	if !tc.On() || tc.Protocol != "grpc" || tc.Headers["x-api-key"] != "a b" || tc.Headers["x-team"] != "2" || len(tc.Attributes) != 1 || tc.ServiceVersion != "v1" || tc.Validate() != nil {
		t.Errorf("tracing config %+v", tc)
	}
}
