package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// phases receives arr's spans (OTLP over HTTP/protobuf, on loopback) and
// breaks each measured completion down into phases: with -phases, arr
// runs with tracing on (which costs it a little) so the table shows
// where a completion's time goes, not the gateway's best figures.
type phases struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	srv   *http.Server
	url   string
	// windows are the measured runs: spans of requests that started in
	// one are that target's.
	windows []window
}

type window struct {
	target     string
	start, end time.Time
}

// startPhases starts the receiver.
func startPhases() (*phases, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &phases{url: "http://" + ln.Addr().String() + "/v1/traces"}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.receive), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// env is arr's tracing configuration: every span, exported often enough
// that the queue never drops one.
func (p *phases) env() []string {
	return []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + p.url,
		"OTEL_BSP_SCHEDULE_DELAY=200", "OTEL_BSP_MAX_QUEUE_SIZE=262144", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE=8192"}
}

func (p *phases) receive(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(io.LimitReader(r.Body, 256<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			p.spans = append(p.spans, ss.Spans...)
		}
	}
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(nil)
}

// measured records that target's measured run took place from start to
// now.
func (p *phases) measured(target string, start time.Time) {
	p.windows = append(p.windows, window{target: target, start: start, end: time.Now()})
}

// phaseNames are the phases of a completion, in order.
var phaseNames = []string{
	"before the use case (auth, key, plan quota, body)",
	"routing",
	"in the use case otherwise (limits, cache, reply)",
	"upstream attempt",
	"audit append (durable commit)",
	"after the use case (writing the reply)",
	"total (server span)",
}

// report prints the median of each phase, in µs, per target, for the
// traces whose server span started inside one of its windows. Call it
// after arr has stopped (its last spans flushed).
func (p *phases) report() {
	p.mu.Lock()
	defer p.mu.Unlock()
	byTrace := map[string][]*tracepb.Span{}
	for _, s := range p.spans {
		k := string(s.TraceId)
		byTrace[k] = append(byTrace[k], s)
	}
	per := map[string][][]float64{} // target -> phase -> samples
	for _, spans := range byTrace {
		target, ph, ok := p.breakDown(spans)
		if !ok {
			continue
		}
		if per[target] == nil {
			per[target] = make([][]float64, len(phaseNames))
		}
		for i, v := range ph {
			per[target][i] = append(per[target][i], v)
		}
	}
	fmt.Printf("\nphases of a completion, median µs (tracing on; %d spans received):\n", len(p.spans))
	var targets []string
	for t := range per {
		targets = append(targets, t)
	}
	slices.Sort(targets)
	fmt.Printf("%-52s", "phase")
	for _, t := range targets {
		fmt.Printf("  %18s", fmt.Sprintf("%s (%d)", t, len(per[t][0])))
	}
	fmt.Println()
	for i, name := range phaseNames {
		fmt.Printf("%-52s", name)
		for _, t := range targets {
			fmt.Printf("  %18.0f", median(slices.Clone(per[t][i])))
		}
		fmt.Println()
	}
}

// breakDown finds one completion's spans and its target.
func (p *phases) breakDown(spans []*tracepb.Span) (string, []float64, bool) {
	var server, use, route, attempt, appendSpan *tracepb.Span
	for _, s := range spans {
		switch {
		case s.Kind == tracepb.Span_SPAN_KIND_SERVER && strings.HasSuffix(s.Name, "/chat/completions"):
			server = s
		case s.Kind == tracepb.Span_SPAN_KIND_CLIENT && strings.HasPrefix(s.Name, "chat "):
			attempt = s
		case strings.HasPrefix(s.Name, "chat "):
			use = s
		case s.Name == "arr.route":
			route = s
		case s.Name == "arr.audit.append":
			appendSpan = s
		}
	}
	if server == nil || use == nil || route == nil || attempt == nil || appendSpan == nil {
		return "", nil, false
	}
	start := time.Unix(0, int64(server.StartTimeUnixNano))
	target := ""
	for _, w := range p.windows {
		if !start.Before(w.start) && start.Before(w.end) {
			target = w.target
		}
	}
	if target == "" {
		return "", nil, false
	}
	us := func(a, b uint64) float64 { return float64(int64(b)-int64(a)) / 1e3 }
	d := func(s *tracepb.Span) float64 { return us(s.StartTimeUnixNano, s.EndTimeUnixNano) }
	inUse := d(use) - d(route) - d(attempt) - d(appendSpan)
	return target, []float64{
		us(server.StartTimeUnixNano, use.StartTimeUnixNano), d(route), inUse, d(attempt), d(appendSpan),
		us(use.EndTimeUnixNano, server.EndTimeUnixNano), d(server),
	}, true
}

func (p *phases) close() { _ = p.srv.Close() }
