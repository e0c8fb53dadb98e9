package embed

import (
	"context"
	"errors"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/commands/complete"
)

// dispatch tries the candidates in order until one answers with the
// vectors asked for: on a 5xx, 429, 408, timeout, connection failure, open
// breaker or a reply that is not one vector of the right length per
// input, it moves on; any other 4xx is the request's own (Refused).
func (h *Handler) dispatch(ctx context.Context, k *call) (*answer, error) {
	failure := &complete.UpstreamFailure{}
	for i, cand := range k.dec.Candidates {
		m := cand.Model
		body, err := k.req.upstreamBody(m)
		if err != nil {
			return nil, err
		}
		resp, err := h.cfg.Upstream.Embed(ctx, m.Model, body)
		if err == nil {
			h.m.upstream.WithLabelValues(m.ID).Observe(resp.FirstByte.Seconds())
			var a *answer
			if a, err = parseAnswer(resp.Data, m, k.req); err == nil {
				a.attempts, a.upstreamTime = i+1, resp.FirstByte
				return a, nil
			}
			err = &upstream.Error{Model: m.ID, Status: resp.Status, Retryable: true, Err: err}
		}
		var ue *upstream.Error
		if errors.As(err, &ue) && !ue.Retryable {
			return nil, &complete.Refused{Status: ue.Status, Body: ue.Body, Err: ue}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		failure.Add(m.ID, err)
		h.m.failovers.WithLabelValues(m.ID).Inc()
		h.cfg.Logger.Warn("embedding upstream failed; trying the next", "model", m.ID, "err", err, "request_id", k.md.RequestID)
	}
	return nil, failure
}
