package main_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestTracesOTLP: with the OTEL_* variables pointing at a real OTLP
// receiver (the Collector's, on loopback), `arr up` exports a server span
// per request on all three services, named by the route template, joined
// to the caller's traceparent; a completion's span has children for
// routing, the upstream attempt (whose traceparent the upstream saw) and
// the durable append of its audit entry, and carries the GenAI attributes,
// the tier and the audit hash. No span carries the prompt, the completion,
// the key or the Authorization header. The spans are flushed at shutdown
// (the batcher's scheduled export is set beyond the test), over
// HTTP/protobuf and gRPC.
func TestTracesOTLP(t *testing.T) {
	for _, proto := range []string{"http/protobuf", "grpc"} {
		t.Run(strings.ReplaceAll(proto, "/", "-"), func(t *testing.T) {
			sink := startOTLPSink(t)
			endpoint := "http://" + sink.httpAddr
			if proto == "grpc" {
				endpoint = "http://" + sink.grpcAddr
			}
			g := newGateway(t, "enterprise", "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL="+proto,
				"OTEL_SERVICE_NAME=arr-trace-test", "OTEL_RESOURCE_ATTRIBUTES=deployment.environment.name=e2e",
				// No scheduled export: what arrives, the shutdown flushed.
				"OTEL_BSP_SCHEDULE_DELAY=600000", "ARR_LOG_LEVEL=info")
			// A stream first: the upstream keeps the last traceparent.
			streamPrompt := "the secret streamed prompt " + randHex(8)
			if resp, evs := g.chatStream(t, map[string]any{"model": "auto", "stream": true, "messages": userMsg(streamPrompt)}); resp.StatusCode != http.StatusOK || len(evs) < 2 {
				t.Fatalf("stream: %d, %d events", resp.StatusCode, len(evs))
			}
			prompt := "the secret prompt " + randHex(8)
			traceID, clientSpan := randHex(16), randHex(8)
			status, _, body := g.chat(t, map[string]any{"model": "auto", "messages": userMsg(prompt), "temperature": 0.7},
				"traceparent", "00-"+traceID+"-"+clientSpan+"-01")
			if status != http.StatusOK {
				t.Fatalf("chat: %d %v", status, body)
			}
			reply := replyText(t, body)
			rt := routingOf(t, body)
			// A route with an id: its span is named by the template.
			hash := rt["audit_hash"].(string)
			if code, b := get(t, g.gateway+"/v1/audit/"+hash, g.owner()); code != http.StatusOK {
				t.Fatalf("GET /v1/audit/{hash}: %d %s", code, b)
			}
			// An append the request waits on (feedback).
			notes := "the secret notes " + randHex(8)
			if code, out := g.postKeyed(t, "/v1/feedback", g.key, map[string]any{"audit_hash": hash, "rating": 4, "notes": notes}); code != http.StatusCreated {
				t.Fatalf("feedback: %d %v", code, out)
			}
			// The Messages route (the key in x-api-key) runs the same use case.
			messagesPrompt := "the secret messages prompt " + randHex(8)
			if code, _, out := g.messages(t, "/v1/messages", map[string]any{"model": "claude-haiku-4-5", "max_tokens": 64,
				"messages": []any{map[string]any{"role": "user", "content": messagesPrompt}}}); code != http.StatusOK {
				t.Fatalf("messages: %d %v", code, out)
			}
			for _, svc := range []string{g.answer, g.records} {
				if code, b := get(t, svc+"/healthz", nil); code != http.StatusOK {
					t.Fatalf("GET %s/healthz: %d %s", svc, code, b)
				}
			}
			g.proc.stop(t) // the spans are exported by the shutdown's flush
			if !strings.Contains(g.proc.logs.String(), "traces flushed") {
				t.Errorf("arr did not say it flushed the traces; logs:\n%s", g.proc.logs.String())
			}
			spans := sink.Spans()
			checkCompletionTrace(t, g, spans, traceID, clientSpan, rt)
			checkServiceSpans(t, spans, hash)
			checkAppendAndStream(t, spans)
			checkMessagesSpans(t, spans)
			checkNoSecrets(t, spans, g.key, prompt, reply, notes, streamPrompt, messagesPrompt)
		})
	}
}

// checkCompletionTrace checks the tree of the chat request: server →
// completion → routing, upstream attempt (traceparent seen upstream) and
// audit append.
func checkCompletionTrace(t *testing.T, g *gw, spans []gotSpan, traceID, clientSpan string, rt map[string]any) {
	t.Helper()
	server := findSpan(t, spans, func(s gotSpan) bool { return s.Name == "POST /v1/chat/completions" && s.TraceID == traceID })
	if server.TraceID != traceID || server.ParentID != clientSpan || server.Kind != ptrace.SpanKindServer {
		t.Errorf("server span: trace %s parent %s kind %v; want the client's trace %s, parent %s, kind server", server.TraceID, server.ParentID, server.Kind, traceID, clientSpan)
	}
	wantAttrs(t, server, map[string]any{"http.route": "/v1/chat/completions", "http.request.method": "POST", "http.response.status_code": int64(200), "arr.service": "gateway"})
	if server.Resource["service.name"] != "arr-trace-test" || server.Resource["deployment.environment.name"] != "e2e" {
		t.Errorf("resource %v: want service.name arr-trace-test and deployment.environment.name e2e", server.Resource)
	}
	comp := findSpan(t, spans, func(s gotSpan) bool { return s.Name == "chat auto" && s.ParentID == server.SpanID })
	wantAttrs(t, comp, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "auto",
		"arr.routing.tier": rt["tier"], "arr.audit_hash": rt["audit_hash"], "arr.model": rt["model"],
		"gen_ai.provider.name": genAIProvider(rt["vendor"].(string))})
	if m, _ := comp.Attrs["gen_ai.response.model"].(string); m == "" {
		t.Errorf("completion span %v: no gen_ai.response.model", comp.Attrs)
	}
	for _, k := range []string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
		if n, _ := comp.Attrs[k].(int64); n <= 0 {
			t.Errorf("completion span: %s = %v, want > 0", k, comp.Attrs[k])
		}
	}
	route := findSpan(t, spans, func(s gotSpan) bool { return s.Name == "arr.route" && s.ParentID == comp.SpanID })
	wantAttrs(t, route, map[string]any{"arr.routing.tier": rt["tier"]})
	attempt := findSpan(t, spans, func(s gotSpan) bool { return s.Kind == ptrace.SpanKindClient && s.ParentID == comp.SpanID })
	wantAttrs(t, attempt, map[string]any{"gen_ai.operation.name": "chat", "arr.model": rt["model"], "http.response.status_code": int64(200)})
	upModel, _ := attempt.Attrs["gen_ai.request.model"].(string)
	if want := "00-" + traceID + "-" + attempt.SpanID + "-01"; g.up.LastTraceparent(upModel) != want {
		t.Errorf("the upstream saw traceparent %q for %s; want %q (the attempt's span)", g.up.LastTraceparent(upModel), upModel, want)
	}
	appendSpan := findSpan(t, spans, func(s gotSpan) bool { return s.Name == "arr.audit.append" && s.ParentID == comp.SpanID })
	wantAttrs(t, appendSpan, map[string]any{"arr.audit_hash": rt["audit_hash"]})
	for _, s := range []gotSpan{comp, route, attempt, appendSpan} {
		if s.TraceID != traceID {
			t.Errorf("span %s is in trace %s, not the request's %s", s.Name, s.TraceID, traceID)
		}
	}
}

// checkAppendAndStream: the feedback's append is a child of its request's
// span; the stream's completion has its routing, attempt and append
// children, and ended with its usage once recorded.
func checkAppendAndStream(t *testing.T, spans []gotSpan) {
	t.Helper()
	fb := findSpan(t, spans, func(s gotSpan) bool { return s.Name == "POST /v1/feedback" })
	app := findSpan(t, spans, func(s gotSpan) bool { return s.Name == "arr.eventstore.append" && s.ParentID == fb.SpanID })
	if types, _ := app.Attrs["arr.eventstore.event_types"].([]any); len(types) != 1 || app.Attrs["arr.eventstore.events"] != int64(1) {
		t.Errorf("the feedback's append: %v", app.Attrs)
	}
	comp := findSpan(t, spans, func(s gotSpan) bool { return s.Name == "chat auto" && s.Attrs["arr.stream"] == true })
	for _, child := range []func(gotSpan) bool{
		func(s gotSpan) bool { return s.Name == "arr.route" },
		func(s gotSpan) bool { return s.Kind == ptrace.SpanKindClient },
		func(s gotSpan) bool { return s.Name == "arr.audit.append" },
	} {
		findSpan(t, spans, func(s gotSpan) bool { return s.ParentID == comp.SpanID && child(s) })
	}
	if n, _ := comp.Attrs["gen_ai.usage.output_tokens"].(int64); n <= 0 || comp.Attrs["arr.audit_hash"] == nil {
		t.Errorf("the stream's completion span: %v", comp.Attrs)
	}
}

// checkMessagesSpans: a Messages request's completion is a child of its
// server span, named by what the claude-… alias resolves to, recorded.
func checkMessagesSpans(t *testing.T, spans []gotSpan) {
	t.Helper()
	server := findSpan(t, spans, func(s gotSpan) bool { return s.Name == "POST /v1/messages" })
	comp := findSpan(t, spans, func(s gotSpan) bool { return s.ParentID == server.SpanID && strings.HasPrefix(s.Name, "chat ") })
	if m := comp.Attrs["gen_ai.request.model"]; m == "claude-haiku-4-5" || m == "_OTHER" || m == nil || comp.Attrs["arr.audit_hash"] == nil {
		t.Errorf("the Messages completion's span %q: %v", comp.Name, comp.Attrs)
	}
}

// checkServiceSpans: every service has its server spans, and a route with
// an id is named by its template, never by the path.
func checkServiceSpans(t *testing.T, spans []gotSpan, hash string) {
	t.Helper()
	for _, svc := range []string{"answer", "gateway", "records"} {
		findSpan(t, spans, func(s gotSpan) bool { return s.Name == "GET /healthz" && s.Attrs["arr.service"] == svc })
	}
	audit := findSpan(t, spans, func(s gotSpan) bool { return s.Name == "GET /v1/audit/:hash" })
	wantAttrs(t, audit, map[string]any{"http.route": "/v1/audit/:hash", "http.response.status_code": int64(200)})
	for _, s := range spans {
		if s.Kind == ptrace.SpanKindServer && strings.Contains(s.Name, hash) {
			t.Errorf("server span named %q: the raw path, not the route template", s.Name)
		}
	}
}

// checkNoSecrets scans every string of every span for the key, the
// Authorization header's value, the upstream's key and the texts (the
// prompts, the reply, the feedback's notes).
func checkNoSecrets(t *testing.T, spans []gotSpan, key string, texts ...string) {
	t.Helper()
	secrets := map[string]string{"the key": key, "the Authorization value": "Bearer " + key, "the upstream key": "sk-test-upstream"}
	for i, text := range texts {
		secrets[fmt.Sprintf("the request's or reply's text #%d", i)] = text
	}
	for _, s := range spans {
		for _, text := range s.Texts {
			for what, secret := range secrets {
				if strings.Contains(text, secret) {
					t.Errorf("span %q carries %s: %q", s.Name, what, text)
				}
			}
		}
	}
	if len(spans) < 8 {
		t.Fatalf("only %d spans received", len(spans))
	}
}

func findSpan(t *testing.T, spans []gotSpan, match func(gotSpan) bool) gotSpan {
	t.Helper()
	i := slices.IndexFunc(spans, match)
	if i < 0 {
		var names []string
		for _, s := range spans {
			names = append(names, fmt.Sprintf("%s(%s<-%s)", s.Name, s.SpanID, s.ParentID))
		}
		t.Fatalf("no such span among %d: %s", len(spans), strings.Join(names, ", "))
	}
	return spans[i]
}

// wantAttrs checks attributes; a nil want is skipped.
func wantAttrs(t *testing.T, s gotSpan, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if v == nil {
			continue
		}
		if s.Attrs[k] != v {
			t.Errorf("span %s: %s = %v (%T), want %v (%T)", s.Name, k, s.Attrs[k], s.Attrs[k], v, v)
		}
	}
}

// replyText is the completion's text (at least 8 characters, so the scan
// for it means something).
func replyText(t *testing.T, body map[string]any) string {
	t.Helper()
	choices, _ := body["choices"].([]any)
	if len(choices) == 0 {
		t.Fatalf("no choices: %v", body)
	}
	msg, _ := choices[0].(map[string]any)["message"].(map[string]any)
	text, _ := msg["content"].(string)
	if len(text) < 8 {
		t.Fatalf("reply %q too short to look for", text)
	}
	return text
}

// genAIProvider is the gen_ai.provider.name a catalog vendor maps to.
func genAIProvider(vendor string) string {
	if vendor == "google" {
		return "gcp.gemini"
	}
	return vendor
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = io.ReadFull(rand.Reader, b)
	return hex.EncodeToString(b)
}
