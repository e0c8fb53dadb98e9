package main_test

import (
	"context"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// otlpSink is a real OTLP receiver on loopback: the OpenTelemetry
// Collector's otlpreceiver, built from its Go modules, serving OTLP over
// gRPC and HTTP/protobuf, with a consumer that records every span it
// receives.
type otlpSink struct {
	grpcAddr, httpAddr string
	rcv                receiver.Traces

	mu    sync.Mutex
	spans []gotSpan
}

// gotSpan is one received span, flattened.
type gotSpan struct {
	TraceID, SpanID, ParentID string
	Name                      string
	Kind                      ptrace.SpanKind
	Status                    ptrace.StatusCode
	Attrs                     map[string]any
	Resource                  map[string]any
	// Texts are every string the span carries: its name, its attributes'
	// keys and values, its events' and links' attributes, its status
	// message and its resource's attributes.
	Texts []string
}

func startOTLPSink(t *testing.T) *otlpSink {
	t.Helper()
	s := &otlpSink{grpcAddr: freeAddr(t), httpAddr: freeAddr(t)}
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = s.grpcAddr
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = s.httpAddr
	next, err := consumer.NewTraces(s.consume)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if s.rcv, err = f.CreateTraces(ctx, receivertest.NewNopSettings(f.Type()), cfg, next); err != nil {
		t.Fatalf("creating the OTLP receiver: %v", err)
	}
	if err := s.rcv.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatalf("starting the OTLP receiver: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.rcv.Shutdown(ctx)
	})
	return s
}

func (s *otlpSink) consume(_ context.Context, td ptrace.Traces) error {
	var got []gotSpan
	for _, rs := range td.ResourceSpans().All() {
		res := rs.Resource().Attributes().AsRaw()
		var resTexts []string
		for k, v := range rs.Resource().Attributes().All() {
			resTexts = append(resTexts, k, v.AsString())
		}
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				g := gotSpan{TraceID: hexID(sp.TraceID()), SpanID: hexSpan(sp.SpanID()), Name: sp.Name(), Kind: sp.Kind(),
					Status: sp.Status().Code(), Attrs: sp.Attributes().AsRaw(), Resource: res}
				if !sp.ParentSpanID().IsEmpty() {
					g.ParentID = hexSpan(sp.ParentSpanID())
				}
				g.Texts = append(append(g.Texts, resTexts...), sp.Name(), sp.Status().Message(), sp.TraceState().AsRaw())
				g.Texts = append(g.Texts, mapTexts(sp.Attributes())...)
				for _, ev := range sp.Events().All() {
					g.Texts = append(append(g.Texts, ev.Name()), mapTexts(ev.Attributes())...)
				}
				for _, l := range sp.Links().All() {
					g.Texts = append(g.Texts, mapTexts(l.Attributes())...)
				}
				got = append(got, g)
			}
		}
	}
	s.mu.Lock()
	s.spans = append(s.spans, got...)
	s.mu.Unlock()
	return nil
}

func mapTexts(m pcommon.Map) []string {
	var out []string
	for k, v := range m.All() {
		out = append(out, k, v.AsString())
	}
	return out
}

func hexID(id pcommon.TraceID) string { return hex.EncodeToString(id[:]) }

func hexSpan(id pcommon.SpanID) string { return hex.EncodeToString(id[:]) }

// Spans returns the spans received so far.
func (s *otlpSink) Spans() []gotSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]gotSpan(nil), s.spans...)
}
