package llm_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/arr-dev/arr/adapters/llm"
)

// TestCompleteSpan: a completion is a client span whose traceparent the
// endpoint receives (so the answer service's traces join the gateway's),
// with the models and the usage and never the messages or the key; a
// failure is marked without its text. Without a tracer no traceparent is
// sent.
func TestCompleteSpan(t *testing.T) {
	var seen []string
	fail := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		seen = append(seen, r.Header.Get("Traceparent"))
		w.Header().Set("Content-Type", "application/json")
		if fail {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, `{"error":{"message":"upstream said: the secret question"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"model":"gpt-4.1-nano","choices":[{"message":{"content":"the answer"}}],"usage":{"prompt_tokens":12,"completion_tokens":3}}`)
	}))
	defer srv.Close()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", APIKey: "sk-the-llm-key", Tracer: tp.Tracer("test")})
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Model: "auto", Messages: []llm.Message{{Role: "user", Content: "the secret question"}}}
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	fail = true
	if _, err := c.Complete(context.Background(), req); err == nil {
		t.Fatal("a 502 was answered")
	}
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	if want := "00-" + spans[0].SpanContext.TraceID().String() + "-" + spans[0].SpanContext.SpanID().String() + "-01"; seen[0] != want {
		t.Errorf("the endpoint saw traceparent %q, want %q", seen[0], want)
	}
	ok := map[string]string{}
	for _, kv := range spans[0].Attributes {
		ok[string(kv.Key)] = kv.Value.Emit()
	}
	if spans[0].Name != "chat auto" || spans[0].SpanKind != trace.SpanKindClient || ok["gen_ai.request.model"] != "auto" ||
		ok["gen_ai.response.model"] != "gpt-4.1-nano" || ok["gen_ai.usage.input_tokens"] != "12" || ok["gen_ai.usage.output_tokens"] != "3" {
		t.Errorf("span %q %v: %v", spans[0].Name, spans[0].SpanKind, ok)
	}
	if spans[1].Status.Code != codes.Error {
		t.Errorf("the failed completion's span: %v", spans[1].Status)
	}
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if v := kv.Value.Emit(); strings.Contains(v, "secret question") || strings.Contains(v, "sk-the-llm-key") || strings.Contains(v, "the answer") {
				t.Errorf("attribute %s carries %q", kv.Key, v)
			}
		}
		if strings.Contains(s.Status.Description, "secret") {
			t.Errorf("status %q carries the error body", s.Status.Description)
		}
	}
	off, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	fail = false
	if _, err := off.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if seen[2] != "" {
		t.Errorf("traces off, yet the endpoint saw traceparent %q", seen[2])
	}
}
