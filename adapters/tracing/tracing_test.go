package tracing_test

import (
	"context"
	"testing"

	"github.com/arr-dev/arr/adapters/tracing"
)

// TestOn: traces are off unless an endpoint or the otlp exporter asks for
// them, and OTEL_SDK_DISABLED wins.
func TestOn(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  tracing.Config
		on   bool
	}{
		{"nothing set", tracing.Config{}, false},
		{"an endpoint", tracing.Config{Endpoint: "http://127.0.0.1:4318"}, true},
		{"a traces endpoint", tracing.Config{TracesEndpoint: "http://127.0.0.1:4318/v1/traces"}, true},
		{"otlp without endpoint", tracing.Config{Exporter: "otlp"}, true},
		{"none with an endpoint", tracing.Config{Exporter: "none", Endpoint: "http://127.0.0.1:4318"}, false},
		{"disabled", tracing.Config{Disabled: true, Exporter: "otlp", Endpoint: "http://127.0.0.1:4318"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.cfg.On(); got != c.on {
				t.Errorf("On() = %v, want %v", got, c.on)
			}
			p, err := tracing.New(context.Background(), c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if (p != nil) != c.on || (p.Tracer() != nil) != c.on {
				t.Errorf("New: provider %v, want on=%v", p, c.on)
			}
			if err := p.Shutdown(context.Background()); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
		})
	}
}

// TestEndpoints: the HTTP exporter sends to the base URL's /v1/traces, or
// to the traces endpoint as is; gRPC to the endpoint.
func TestEndpoints(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  tracing.Config
		want string
	}{
		{"http base", tracing.Config{Endpoint: "http://127.0.0.1:4318/"}, "http://127.0.0.1:4318/v1/traces"},
		{"http base with path", tracing.Config{Endpoint: "https://otel.example/otlp"}, "https://otel.example/otlp/v1/traces"},
		{"http traces", tracing.Config{Endpoint: "http://a:4318", TracesEndpoint: "http://b:4318/custom"}, "http://b:4318/custom"},
		{"http default", tracing.Config{Exporter: "otlp"}, "http://localhost:4318/v1/traces"},
		{"grpc", tracing.Config{Protocol: "grpc", Endpoint: "http://127.0.0.1:4317"}, "http://127.0.0.1:4317"},
		{"grpc default", tracing.Config{Protocol: "grpc", Exporter: "otlp"}, "http://localhost:4317"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := tracing.New(context.Background(), c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Shutdown(context.Background())
			if p.Endpoint() != c.want {
				t.Errorf("endpoint %q, want %q", p.Endpoint(), c.want)
			}
		})
	}
}

// TestValidate: every bad value is refused.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  tracing.Config
	}{
		{"exporter", tracing.Config{Exporter: "zipkin"}},
		{"protocol", tracing.Config{Protocol: "http/json"}},
		{"endpoint without scheme", tracing.Config{Endpoint: "127.0.0.1:4318"}},
		{"endpoint with user", tracing.Config{Endpoint: "http://u:p@127.0.0.1:4318"}},
		{"traces endpoint with query", tracing.Config{TracesEndpoint: "http://127.0.0.1:4318/v1/traces?x=1"}},
		{"sampler", tracing.Config{Sampler: "sometimes"}},
		{"sampler ratio", tracing.Config{Sampler: "traceidratio", SamplerArg: "1.5"}},
		{"sampler ratio text", tracing.Config{Sampler: "parentbased_traceidratio", SamplerArg: "half"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.cfg.Validate(); err == nil {
				t.Errorf("%+v validated", c.cfg)
			}
		})
	}
	for _, s := range tracing.Samplers() {
		if _, err := tracing.NewSampler(s, "0.5"); err != nil {
			t.Errorf("sampler %s: %v", s, err)
		}
	}
}

// TestParseList: key=value pairs, percent-decoded; a pair without a key or
// an equals sign is refused.
func TestParseList(t *testing.T) {
	m, err := tracing.ParseList(" a=1 , b=two%20words,,c=x=y ")
	if err != nil {
		t.Fatal(err)
	}
	if m["a"] != "1" || m["b"] != "two words" || m["c"] != "x=y" || len(m) != 3 {
		t.Errorf("parsed %v", m)
	}
	for _, bad := range []string{"novalue", "=x", "a=%zz"} {
		if _, err := tracing.ParseList(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	attrs, err := tracing.ParseAttributes("z=1,a=2")
	if err != nil || len(attrs) != 2 || attrs[0].Key != "a" {
		t.Errorf("ParseAttributes: %v %v", attrs, err)
	}
}

func TestGenAIProvider(t *testing.T) {
	for vendor, want := range map[string]string{"openai": "openai", "anthropic": "anthropic", "google": "gcp.gemini", "acme": "acme"} {
		if got := tracing.GenAIProvider(vendor); got != want {
			t.Errorf("GenAIProvider(%q) = %q, want %q", vendor, got, want)
		}
	}
}
