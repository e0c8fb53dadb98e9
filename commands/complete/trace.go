package complete

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/arr-dev/arr/adapters/tracing"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/routing"
)

// Traces (Config.Tracer): a completion is a span named as the GenAI
// semantic conventions name an inference ("chat auto"), the child of the
// request's server span, with children for routing (arr.route), each
// upstream attempt (adapters/upstream) and the durable append of its audit
// entry (arr.audit.append). When it ends it carries gen_ai.provider.name,
// gen_ai.response.model, the token counts, arr.routing.tier and
// arr.audit_hash; a stream's span ends when the stream is recorded (or
// closed). No attribute holds the prompt, the reply or the caller's key.
// With no tracer nothing is started.

// Handle runs one completion (handle), within its span when traces are on.
func (h *Handler) Handle(ctx context.Context, cmd Command) (Result, error) {
	if h.cfg.Tracer == nil {
		return h.handle(ctx, cmd)
	}
	model := h.requestModel(cmd.Request)
	ctx, span := h.cfg.Tracer.Start(ctx, "chat "+model, trace.WithAttributes(
		semconv.GenAIOperationNameChat, semconv.GenAIRequestModel(model), attribute.Bool("arr.stream", cmd.Request.Stream)))
	res, err := h.handle(ctx, cmd)
	switch {
	case err != nil:
		failSpan(span, err)
		span.End()
	case res.Stream == nil:
		h.endCompletion(span, res.Reply.Routing, res.Reply.Usage)
	case res.Stream.resp == nil: // a replay from the cache, recorded already
		h.endCompletion(span, res.Stream.routing, res.Stream.usage)
	default:
		res.Stream.span = span // ended by finish or Close
	}
	return res, err
}

// requestModel is the model the request asks for as the span shows it:
// auto, a tier or a catalog model (a name an alias resolves, such as a
// claude-… name on the Messages route, as what it resolves to); anything
// else, being the client's text, is _OTHER.
func (h *Handler) requestModel(r *Request) string {
	name := h.cfg.Catalog.Resolve(r.Model)
	if name == "" || name == "auto" {
		return "auto"
	}
	if _, ok := h.cfg.Catalog.Tier(name); ok {
		return name
	}
	if _, ok := h.cfg.Catalog.Model(name); ok {
		return name
	}
	return "_OTHER"
}

// endCompletion ends a completion's span with what answered it.
func (h *Handler) endCompletion(span trace.Span, r Routing, u Usage) {
	respModel := r.Model
	if m, ok := h.cfg.Catalog.Model(r.Model); ok && m.UpstreamModel != "" {
		respModel = m.UpstreamModel
	}
	span.SetAttributes(
		semconv.GenAIProviderNameKey.String(tracing.GenAIProvider(r.Vendor)), semconv.GenAIResponseModel(respModel),
		semconv.GenAIUsageInputTokens(int(u.Prompt)), semconv.GenAIUsageOutputTokens(int(u.Completion)),
		attribute.String("arr.routing.tier", r.Tier), attribute.String("arr.model", r.Model),
		attribute.String("arr.audit_hash", r.AuditHash), attribute.Int64("arr.audit_position", int64(r.AuditPosition)),
		attribute.Bool("arr.cache_hit", r.CacheHit), attribute.Int("arr.attempts", r.Attempts),
		attribute.Bool("arr.usage_estimated", u.Estimated), attribute.Float64("arr.cost_usd", r.CostUSD))
	span.End()
}

// failSpan marks span failed: error.type is the domain error's code or
// the failure's kind, never its message (an upstream's error body could
// quote the prompt).
func failSpan(span trace.Span, err error) {
	typ := "error"
	var de *domain.Error
	var uf *UpstreamFailure
	var rf *Refused
	switch {
	case errors.As(err, &de):
		typ = de.Code
	case errors.As(err, &uf):
		typ = "upstream_failure"
	case errors.As(err, &rf):
		typ = "upstream_refused"
	case errors.Is(err, commands.ErrOutcomeUnknown):
		typ = "outcome_unknown"
	case errors.Is(err, context.Canceled):
		typ = "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		typ = "timeout"
	}
	span.SetAttributes(semconv.ErrorTypeKey.String(typ))
	span.SetStatus(codes.Error, typ)
}

// route asks routing for the decision, within the arr.route span.
func (h *Handler) route(ctx context.Context, k *call) (routing.Decision, error) {
	route := func() (routing.Decision, error) {
		return k.req.RouteAllowed(h.cfg.Catalog, h.fb.get(), k.caller.Plan.Offer().Limits.BrandPref, allow(k.caller), k.caller.Limits.Models)
	}
	if h.cfg.Tracer == nil {
		return route()
	}
	_, span := h.cfg.Tracer.Start(ctx, "arr.route")
	defer span.End()
	dec, err := route()
	if err != nil {
		failSpan(span, err)
		return dec, err
	}
	span.SetAttributes(attribute.String("arr.routing.tier", dec.Tier), attribute.Float64("arr.routing.difficulty", dec.Difficulty),
		attribute.Int("arr.routing.candidates", len(dec.Candidates)))
	return dec, nil
}

// recordTraced appends the completion's audit entry (Recorder.Record)
// within the arr.audit.append span: the wait for the durable append.
func (h *Handler) recordTraced(ctx context.Context, c commands.RecordCompletion) (commands.Recorded, error) {
	if h.cfg.Tracer == nil {
		return h.cfg.Chain.Record(ctx, c)
	}
	ctx, span := h.cfg.Tracer.Start(ctx, "arr.audit.append")
	defer span.End()
	rec, err := h.cfg.Chain.Record(ctx, c)
	if err != nil {
		failSpan(span, err)
		return rec, err
	}
	span.SetAttributes(attribute.String("arr.audit_hash", rec.Hash), attribute.Int64("arr.audit_position", int64(rec.Position)))
	return rec, nil
}

// endSpan ends a relayed stream's span: with what answered once it is
// recorded, as failed when it could not be (err).
func (s *Stream) endSpan(err error) {
	if s.span == nil {
		return
	}
	span := s.span
	s.span = nil
	if err != nil {
		failSpan(span, err)
		span.End()
		return
	}
	s.h.endCompletion(span, s.routing, s.usage)
}
