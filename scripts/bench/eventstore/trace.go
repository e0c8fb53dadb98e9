package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// tracer adds up, per SQL statement or pipelined batch, how long the client
// waited for it: the -trace breakdown of where an append's time goes
// (round trips, lock waits, server work and fsync included; the remainder
// of the wall time is client work and queueing). A nil *tracer traces
// nothing. Safe for concurrent use.
type tracer struct {
	mu    sync.Mutex
	stats map[string]*stmtStat
}

type stmtStat struct {
	n     int
	total time.Duration
	max   time.Duration
}

type traceStart struct{}

func newTracer() *tracer { return &tracer{stats: map[string]*stmtStat{}} }

// queryTracer returns the pgx tracer, or nil for a nil *tracer.
func (t *tracer) queryTracer() pgx.QueryTracer {
	if t == nil {
		return nil
	}
	return t
}

func (t *tracer) reset() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.stats = map[string]*stmtStat{}
	t.mu.Unlock()
}

func (t *tracer) add(label string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.stats[label]
	if s == nil {
		s = &stmtStat{}
		t.stats[label] = s
	}
	s.n++
	s.total += d
	s.max = max(s.max, d)
}

func label(sql string) string {
	sql = strings.Join(strings.Fields(sql), " ")
	if len(sql) > 70 {
		sql = sql[:70]
	}
	return sql
}

func since(ctx context.Context) time.Duration {
	t0, _ := ctx.Value(traceStart{}).(time.Time)
	return time.Since(t0)
}

func (t *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return context.WithValue(context.WithValue(ctx, traceStart{}, time.Now()), labelKey{}, label(d.SQL))
}

type labelKey struct{}

func (t *tracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	l, _ := ctx.Value(labelKey{}).(string)
	t.add(l, since(ctx))
}

func (t *tracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var ls []string
	for _, q := range d.Batch.QueuedQueries {
		ls = append(ls, label(q.SQL)[:min(25, len(label(q.SQL)))])
	}
	return context.WithValue(context.WithValue(ctx, traceStart{}, time.Now()), labelKey{}, "batch["+strings.Join(ls, " | ")+"]")
}

// TraceBatchQuery does nothing: a pipeline's results arrive together, so
// per-statement times inside a batch would all land on its first statement.
func (t *tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (t *tracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	l, _ := ctx.Value(labelKey{}).(string)
	t.add(l, since(ctx))
}

func (t *tracer) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	return context.WithValue(context.WithValue(ctx, traceStart{}, time.Now()), labelKey{}, "COPY "+d.TableName.Sanitize())
}

func (t *tracer) TraceCopyFromEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromEndData) {
	l, _ := ctx.Value(labelKey{}).(string)
	t.add(l, since(ctx))
}

// report prints the statements by total time, per transaction (counted by
// COMMIT) and per event.
func (t *tracer) report(w io.Writer, title string, events int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	type row struct {
		l string
		s *stmtStat
	}
	var rows []row
	var total time.Duration
	commits := 0
	for l, s := range t.stats {
		rows = append(rows, row{l, s})
		total += s.total
		if strings.EqualFold(l, "commit") || strings.Contains(l, "| COMMIT]") {
			commits += s.n
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return int(b.s.total - a.s.total) })
	fmt.Fprintf(w, "\n%s: %d transactions, %d events, %.1f events/tx; client-side time per statement:\n", title, commits, events, float64(events)/float64(max(commits, 1)))
	fmt.Fprintf(w, "  %-72s %8s %10s %10s %9s %6s\n", "statement", "calls", "total", "avg", "max", "share")
	for _, r := range rows {
		fmt.Fprintf(w, "  %-72s %8d %10s %10s %9s %5.1f%%\n", r.l, r.s.n, r.s.total.Round(time.Millisecond),
			(r.s.total / time.Duration(r.s.n)).Round(time.Microsecond), r.s.max.Round(time.Microsecond), 100*float64(r.s.total)/float64(max(total, 1)))
	}
}
