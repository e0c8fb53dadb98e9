package tracing

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The values of OTEL_TRACES_EXPORTER and OTEL_EXPORTER_OTLP_PROTOCOL arr
// accepts.
const (
	ExporterOTLP = "otlp"
	ExporterNone = "none"

	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Exporters and Protocols list the accepted values.
func Exporters() []string { return []string{ExporterOTLP, ExporterNone} }

// Protocols lists the OTLP protocols arr exports with.
func Protocols() []string { return []string{ProtocolHTTP, ProtocolGRPC} }

// Samplers lists the values of OTEL_TRACES_SAMPLER arr accepts.
func Samplers() []string {
	return []string{"always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"}
}

// Config is the tracer provider's configuration, from the OTEL_*
// settings.
type Config struct {
	// Exporter is ExporterOTLP or ExporterNone; empty means OTLP when an
	// endpoint is set, none otherwise (traces are off unless asked for).
	Exporter string
	// Disabled is OTEL_SDK_DISABLED=true: off whatever else is set.
	Disabled bool
	// Protocol is ProtocolHTTP (default) or ProtocolGRPC.
	Protocol string
	// Endpoint is OTEL_EXPORTER_OTLP_ENDPOINT: the base URL of every
	// signal (HTTP: the traces go to its path + /v1/traces).
	Endpoint string
	// TracesEndpoint is OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the traces'
	// URL as is; it wins over Endpoint.
	TracesEndpoint string
	// Headers are sent with every export (OTEL_EXPORTER_OTLP_HEADERS).
	Headers map[string]string
	// ServiceName is service.name (empty: the one in Attributes, else
	// arr); ServiceVersion service.version.
	ServiceName    string
	ServiceVersion string
	// Attributes are OTEL_RESOURCE_ATTRIBUTES; service.name from
	// ServiceName wins over one given here.
	Attributes []attribute.KeyValue
	// Sampler is the sampler's name (Samplers) and SamplerArg its argument
	// (the ratio of the traceidratio samplers, default 1).
	Sampler    string
	SamplerArg string
}

// On says whether traces are exported.
func (c Config) On() bool {
	if c.Disabled {
		return false
	}
	switch c.Exporter {
	case ExporterOTLP:
		return true
	case ExporterNone:
		return false
	}
	return c.Endpoint != "" || c.TracesEndpoint != ""
}

// Validate reports every setting arr cannot use, at once.
func (c Config) Validate() error {
	var errs []error
	if c.Exporter != "" && c.Exporter != ExporterOTLP && c.Exporter != ExporterNone {
		errs = append(errs, fmt.Errorf("tracing: exporter %q: want otlp or none", c.Exporter))
	}
	if c.Protocol != "" && c.Protocol != ProtocolHTTP && c.Protocol != ProtocolGRPC {
		errs = append(errs, fmt.Errorf("tracing: protocol %q: want http/protobuf or grpc", c.Protocol))
	}
	for _, u := range []string{c.Endpoint, c.TracesEndpoint} {
		if err := CheckEndpoint(u); u != "" && err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := NewSampler(c.Sampler, c.SamplerArg); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// CheckEndpoint checks an OTLP endpoint: an absolute http(s) URL with a
// host, without a user, query or fragment.
func CheckEndpoint(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("tracing: endpoint %q: want an absolute http(s) URL, like http://127.0.0.1:4318", s)
	}
	return nil
}

// NewSampler returns the sampler named as OTEL_TRACES_SAMPLER names it
// (empty: parentbased_always_on), with arg as OTEL_TRACES_SAMPLER_ARG (a
// ratio from 0 to 1 for the traceidratio samplers; empty: 1).
func NewSampler(name, arg string) (sdktrace.Sampler, error) {
	ratio := 1.0
	if strings.HasSuffix(name, "traceidratio") && arg != "" {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("tracing: sampler argument %q: want a ratio from 0 to 1, like 0.25", arg)
		}
		ratio = r
	}
	switch name {
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), nil
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
	}
	return nil, fmt.Errorf("tracing: sampler %q: want one of %s", name, strings.Join(Samplers(), ", "))
}

// ParseList parses a W3C-baggage-like list as OTEL_RESOURCE_ATTRIBUTES and
// OTEL_EXPORTER_OTLP_HEADERS are written: key=value pairs separated by
// commas, values percent-decoded. Every pair needs a key and an equals
// sign.
func ParseList(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, errors.New("want key=value pairs separated by commas, like deployment.environment=prod,team=gateway")
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("the value of %s is not percent-encoded correctly", k)
		}
		out[k] = dv
	}
	return out, nil
}

// ParseAttributes parses OTEL_RESOURCE_ATTRIBUTES into string attributes,
// in key order.
func ParseAttributes(s string) ([]attribute.KeyValue, error) {
	m, err := ParseList(s)
	if err != nil {
		return nil, err
	}
	out := make([]attribute.KeyValue, 0, len(m))
	for k, v := range m {
		out = append(out, attribute.String(k, v))
	}
	set := attribute.NewSet(out...)
	return set.ToSlice(), nil
}
