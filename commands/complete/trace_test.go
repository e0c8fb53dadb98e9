package complete_test

import (
	"errors"
	"io"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/arr-dev/arr/commands/complete"
)

// TestHandleSpans: a completion is a span with children for routing and
// the audit append, ended with the GenAI attributes, the tier and the
// audit hash once recorded: a reply at once, a relayed stream when it is
// recorded at its end, a replay from the cache at once; a refused request
// ends failed with its code, and a model the catalog does not know is
// never named.
func TestHandleSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	hs := newHarness(t, options{startChain: true, complete: func(c *complete.Config) { c.Tracer = tp.Tracer("test") }})
	ended := func(name string) []sdktrace.ReadOnlySpan {
		var out []sdktrace.ReadOnlySpan
		for _, s := range exp.GetSpans().Snapshots() {
			if s.Name() == name {
				out = append(out, s)
			}
		}
		return out
	}

	res, err := hs.complete(t, request(t, "Say hello", nil), complete.CacheOff)
	if err != nil {
		t.Fatal(err)
	}
	comps := ended("chat auto")
	if len(comps) != 1 {
		t.Fatalf("%d completion spans, want 1", len(comps))
	}
	checkCompletionSpan(t, comps[0], res.Reply.Routing, res.Reply.Usage)
	for _, child := range []string{"arr.route", "arr.audit.append"} {
		s := ended(child)
		if len(s) != 1 || s[0].Parent().SpanID() != comps[0].SpanContext().SpanID() {
			t.Errorf("%s: %d spans, not the completion's child", child, len(s))
		}
	}

	for _, replay := range []bool{false, true} {
		exp.Reset()
		res, err := hs.complete(t, request(t, "Stream to me", map[string]any{"stream": true, "temperature": 0}), complete.CacheAuto)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(ended("chat auto")); n != map[bool]int{false: 0, true: 1}[replay] {
			t.Errorf("replay %v: %d completion spans ended before the stream was read", replay, n)
		}
		if _, err := drain(t, res.Stream); !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		comps := ended("chat auto")
		if len(comps) != 1 {
			t.Fatalf("replay %v: %d completion spans after the stream, want 1", replay, len(comps))
		}
		end := res.Stream.End()
		checkCompletionSpan(t, comps[0], end.Routing, end.Usage)
	}

	exp.Reset()
	if _, err := hs.complete(t, request(t, "Hi", map[string]any{"model": "no-such-model-sk-secret"}), complete.CacheOff); err == nil {
		t.Fatal("an unknown model was answered")
	}
	failed := ended("chat _OTHER")
	if len(failed) != 1 || failed[0].Status().Code != codes.Error {
		t.Fatalf("the refused completion's span: %d, want 1 failed", len(failed))
	}
	for _, kv := range failed[0].Attributes() {
		if kv.Key == "gen_ai.request.model" && kv.Value.AsString() != "_OTHER" {
			t.Errorf("gen_ai.request.model = %q: the client's text", kv.Value.AsString())
		}
	}
}

func checkCompletionSpan(t *testing.T, s sdktrace.ReadOnlySpan, r complete.Routing, u complete.Usage) {
	t.Helper()
	got := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		got[kv.Key] = kv.Value
	}
	want := map[attribute.Key]attribute.Value{
		"gen_ai.operation.name": attribute.StringValue("chat"), "gen_ai.request.model": attribute.StringValue("auto"),
		"gen_ai.provider.name": attribute.StringValue(r.Vendor), "gen_ai.response.model": attribute.StringValue(r.Model),
		"gen_ai.usage.input_tokens": attribute.Int64Value(u.Prompt), "gen_ai.usage.output_tokens": attribute.Int64Value(u.Completion),
		"arr.routing.tier": attribute.StringValue(r.Tier), "arr.audit_hash": attribute.StringValue(r.AuditHash),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k].Emit(), v.Emit())
		}
	}
	if r.AuditHash == "" || u.Completion == 0 {
		t.Errorf("routing %+v usage %+v: nothing to check against", r, u)
	}
}
