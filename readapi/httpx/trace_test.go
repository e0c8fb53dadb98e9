package httpx_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/arr-dev/arr/readapi/httpx"
)

// tracedEngine is an engine with one route with an id, traced by tracer
// (nil: traces off).
func tracedEngine(t testing.TB, tracer trace.Tracer) *gin.Engine {
	t.Helper()
	gin.SetMode(gin.TestMode)
	e, err := httpx.NewEngine(httpx.Base{
		Service: "test", OpenAPI: []byte(`{}`), Logger: slog.New(slog.DiscardHandler), Tracer: tracer,
		Fail:   func(c *gin.Context, err error) { c.AbortWithStatus(http.StatusInternalServerError) },
		Health: func(ctx context.Context) (int, any) { return http.StatusOK, gin.H{"status": "ok"} },
	})
	if err != nil {
		t.Fatal(err)
	}
	e.GET("/v1/things/:id", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"ok": true}) })
	return e
}

const thingPath = "/v1/things/6f1c2d3e-secret-id?q=the+query"

// TestTraceServerSpan: a request is one server span named by its route
// template, a child of the caller's traceparent, with the method, route,
// status and service, and nothing of the path's id, the query or any
// header's value.
func TestTraceServerSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	e := tracedEngine(t, tp.Tracer("test"))
	req := httptest.NewRequest(http.MethodGet, thingPath, nil)
	req.Header.Set("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	req.Header.Set("Authorization", "Bearer sk-the-secret-key")
	req.Header.Set("User-Agent", "the-user-agent")
	e.ServeHTTP(httptest.NewRecorder(), req)
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Name != "GET /v1/things/:id" || s.SpanKind != trace.SpanKindServer {
		t.Errorf("span %q kind %v, want GET /v1/things/:id, server", s.Name, s.SpanKind)
	}
	if s.SpanContext.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || s.Parent.SpanID().String() != "b7ad6b7169203331" {
		t.Errorf("span in trace %s under %s: not the caller's", s.SpanContext.TraceID(), s.Parent.SpanID())
	}
	got := map[string]string{}
	for _, kv := range s.Attributes {
		got[string(kv.Key)] = kv.Value.Emit()
	}
	want := map[string]string{"http.request.method": "GET", "http.route": "/v1/things/:id", "http.response.status_code": "200", "arr.service": "test", "url.scheme": "http"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		for _, secret := range []string{"6f1c2d3e", "the+query", "the query", "sk-the-secret-key", "the-user-agent"} {
			if strings.Contains(k+"="+v, secret) {
				t.Errorf("attribute %s=%s carries %q", k, v, secret)
			}
		}
	}
}

// TestTraceOffSkipsTheTracing: with traces off (no tracer) the engine
// installs no tracing middleware, so a request allocates less than with a
// tracer that samples every span out (whose cost is the traceparent
// extraction and the request's new context). That the off path allocates
// exactly what it did before traces existed is measured by
// BenchmarkEngineRequest/off against the same benchmark on the code
// before (the engine's chain is the same).
func TestTraceOffSkipsTheTracing(t *testing.T) {
	off := tracedEngine(t, nil)
	dropped := tracedEngine(t, sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())).Tracer("test"))
	offAllocs, onAllocs := requestAllocs(off), requestAllocs(dropped)
	t.Logf("allocations per request: off %.0f, on (sampled out) %.0f", offAllocs, onAllocs)
	if offAllocs >= onAllocs {
		t.Errorf("off allocates %.0f per request, on %.0f: the off path should skip the tracing", offAllocs, onAllocs)
	}
}

func requestAllocs(h http.Handler) float64 {
	req := httptest.NewRequest(http.MethodGet, thingPath, nil)
	w := &discard{h: http.Header{}}
	return testing.AllocsPerRun(200, func() {
		clear(w.h)
		h.ServeHTTP(w, req)
	})
}

// BenchmarkEngineRequest measures a request through the shared engine, with
// traces off and on (exported to nowhere: every span sampled, then
// dropped by a processor-less provider).
func BenchmarkEngineRequest(b *testing.B) {
	for _, c := range []struct {
		name   string
		tracer trace.Tracer
	}{{"off", nil}, {"on", sdktrace.NewTracerProvider().Tracer("bench")}} {
		b.Run(c.name, func(b *testing.B) {
			h := tracedEngine(b, c.tracer)
			req := httptest.NewRequest(http.MethodGet, thingPath, nil)
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return io.Discard.Write(b) }
func (d *discard) WriteHeader(int)             {}
