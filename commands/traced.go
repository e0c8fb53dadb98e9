package commands

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/arr-dev/arr/eventstore"
)

// TraceAppends returns store with a span (arr.eventstore.append) around
// every append made within a sampled trace: the appends a request waits
// on (issuing a key, submitting feedback, …) become children of its
// server span. Appends outside a trace (the batched recorders, the CLI)
// start no span. The span names the event types and counts, and the
// positions written: never a stream's events' data. With a nil tracer it
// returns store itself.
func TraceAppends(store Appender, tracer trace.Tracer) Appender {
	if tracer == nil {
		return store
	}
	return tracedAppender{Appender: store, tracer: tracer}
}

type tracedAppender struct {
	Appender
	tracer trace.Tracer
}

func (t tracedAppender) Append(ctx context.Context, streamID string, expected eventstore.ExpectedVersion, events ...eventstore.NewEvent) (eventstore.AppendResult, error) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return t.Appender.Append(ctx, streamID, expected, events...)
	}
	ctx, span := t.tracer.Start(ctx, "arr.eventstore.append", trace.WithAttributes(eventAttrs(1, events)...))
	defer span.End()
	res, err := t.Appender.Append(ctx, streamID, expected, events...)
	endAppend(span, err, res)
	return res, err
}

func (t tracedAppender) AppendBulk(ctx context.Context, appends []eventstore.Append) ([]eventstore.AppendResult, error) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return t.Appender.AppendBulk(ctx, appends)
	}
	var events []eventstore.NewEvent
	for _, a := range appends {
		events = append(events, a.Events...)
	}
	ctx, span := t.tracer.Start(ctx, "arr.eventstore.append", trace.WithAttributes(eventAttrs(len(appends), events)...))
	defer span.End()
	res, err := t.Appender.AppendBulk(ctx, appends)
	endAppend(span, err, res...)
	return res, err
}

// eventAttrs are the streams and events an append writes: how many, and
// the events' types (each once).
func eventAttrs(streams int, events []eventstore.NewEvent) []attribute.KeyValue {
	var types []string
	seen := map[string]bool{}
	for _, e := range events {
		if !seen[e.Type] {
			seen[e.Type] = true
			types = append(types, e.Type)
		}
	}
	return []attribute.KeyValue{attribute.Int("arr.eventstore.streams", streams), attribute.Int("arr.eventstore.events", len(events)),
		attribute.StringSlice("arr.eventstore.event_types", types)}
}

func endAppend(span trace.Span, err error, res ...eventstore.AppendResult) {
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String("append_failed"))
		span.SetStatus(codes.Error, "append_failed")
		return
	}
	if len(res) > 0 {
		span.SetAttributes(attribute.Int64("arr.eventstore.last_position", int64(res[len(res)-1].LastPosition)))
	}
}
