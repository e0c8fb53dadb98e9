package upstream_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/adapters/upstream/upstreamtest"
	"github.com/arr-dev/arr/domain/routing"
)

// TestAttemptSpans: each call is a client span, child of the caller's,
// whose W3C traceparent the upstream receives; a failed call is marked
// with its error type; a stream's span ends when the stream is closed. No
// attribute carries the key or the body. Without a tracer no traceparent
// is sent.
func TestAttemptSpans(t *testing.T) {
	srv := upstreamtest.Start(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	c, err := upstream.New(upstream.Config{Timeout: 5 * time.Second, StreamIdleTimeout: 5 * time.Second,
		APIKey: func(string) string { return "sk-the-upstream-key" }, Tracer: tp.Tracer("test")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, parent := tp.Tracer("test").Start(context.Background(), "parent")
	m := routing.Model{ID: "m-id", Vendor: "google", UpstreamModel: "m-up", BaseURL: srv.URL, APIKeyEnv: "K", Tier: "nano"}
	body := []byte(`{"model":"m-up","messages":[{"role":"user","content":"the secret prompt"}]}`)
	if _, err := c.Complete(ctx, m, body, false); err != nil {
		t.Fatal(err)
	}
	srv.Set("m-up", upstreamtest.Behavior{Status: http.StatusTooManyRequests})
	if _, err := c.Complete(ctx, m, body, false); err == nil {
		t.Fatal("the 429 was not an error")
	}
	srv.Reset()
	resp, err := c.Complete(ctx, m, []byte(`{"model":"m-up","stream":true,"messages":[{"role":"user","content":"the secret prompt"}]}`), true)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 2 {
		t.Errorf("%d spans ended before the stream was read, want 2", n)
	}
	for {
		if _, err := resp.Stream.Next(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
	}
	resp.Stream.Close()
	parent.End()
	spans := exp.GetSpans()
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 3 attempts and the parent", len(spans))
	}
	want := "00-" + spans[2].SpanContext.TraceID().String() + "-" + spans[2].SpanContext.SpanID().String() + "-01"
	if got := srv.LastTraceparent("m-up"); got != want {
		t.Errorf("the upstream saw traceparent %q, want the stream attempt's %q", got, want)
	}
	for i, s := range spans[:3] {
		if s.Name != "chat m-up" || s.SpanKind != trace.SpanKindClient || s.Parent.SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("attempt %d: %q kind %v parent %s", i, s.Name, s.SpanKind, s.Parent.SpanID())
		}
		attrs := map[string]string{}
		for _, kv := range s.Attributes {
			attrs[string(kv.Key)] = kv.Value.Emit()
			if strings.Contains(kv.Value.Emit(), "sk-the-upstream-key") || strings.Contains(kv.Value.Emit(), "secret prompt") {
				t.Errorf("attribute %s carries a secret", kv.Key)
			}
		}
		if attrs["gen_ai.provider.name"] != "gcp.gemini" || attrs["gen_ai.request.model"] != "m-up" || attrs["arr.model"] != "m-id" || attrs["server.address"] != "127.0.0.1" {
			t.Errorf("attempt %d: attributes %v", i, attrs)
		}
		if failed := i == 1; failed != (s.Status.Code == codes.Error) || failed && attrs["error.type"] != "429" {
			t.Errorf("attempt %d: status %v, error.type %q", i, s.Status, attrs["error.type"])
		}
	}

	off, err := upstream.New(upstream.Config{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := off.Complete(ctx, m, body, false); err != nil {
		t.Fatal(err)
	}
	if got := srv.LastTraceparent("m-up"); got != "" {
		t.Errorf("traces off, yet the upstream saw traceparent %q", got)
	}
}
