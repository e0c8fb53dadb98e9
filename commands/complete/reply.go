package complete

import (
	"bytes"
	"context"

	"encoding/json"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/guardrail"
)

// reply finishes a non-streamed completion: it reads the usage (or
// estimates it), caches a finished reply and records the completion.
func (h *Handler) reply(ctx context.Context, k *call, resp *upstream.Response, attempts int) (Reply, error) {
	r, err := h.readReply(k, resp)
	if err != nil {
		return Reply{}, err
	}
	if k.cacheOn && r.cacheable {
		h.cache.put(k.key, r.entry)
	}
	return h.recordReply(ctx, k, resp, attempts, r)
}

// upstreamReply is what the gateway reads of a non-streamed reply.
type upstreamReply struct {
	usage      Usage
	hasRouting bool
	// cacheable: a complete single-choice reply (finish_reason stop or
	// length), the only kind the cache keeps and serves.
	cacheable bool
	entry     cached
	// native: a pass-through reply (native.go).
	native bool
}

// readReply checks that resp is a chat completion and reads its usage
// (or estimates it from the text).
func (h *Handler) readReply(k *call, resp *upstream.Response) (upstreamReply, error) {
	cand := k.dec.Candidates[0]
	if k.native {
		return readNativeReply(resp), nil
	}
	if err := chatReply(cand.Model, resp, h.cfg.Clock().Unix()); err != nil {
		return upstreamReply{}, err
	}
	// shape.Routing is set if the upstream sent a field of that name
	// (another gateway in front of the upstream); ours replaces it.
	var shape chat.Summary
	if err := json.Unmarshal(resp.Data, &shape); err != nil || objectEnd(resp.Data) < 0 {
		return upstreamReply{}, &UpstreamFailure{Attempts: []string{cand.Model.ID + ": the reply is not a chat completion"}}
	}
	u := Usage{Estimated: true, Prompt: k.req.PromptEstimate()}
	if resp.Usage != nil && countsCacheWrites(cand.Model) {
		u = usageOfAnthropic(*resp.Usage) // its cache writes too
	} else if shape.Usage != nil {
		u = usageOf(shape.Usage)
	} else {
		for _, ch := range shape.Choices {
			if ch.Message.Content != nil {
				u.Completion += int64(len(*ch.Message.Content)+3) / 4
			}
		}
		u = k.capEstimate(u, cand)
	}
	return upstreamReply{usage: u, hasRouting: shape.Routing != nil,
		cacheable: len(shape.Choices) == 1 && (shape.Choices[0].FinishReason == "stop" || shape.Choices[0].FinishReason == "length"),
		entry:     cached{body: resp.Data, model: cand.Model.ID, tier: cand.Model.Tier, usage: u, stored: h.cfg.Clock()}}, nil
}

// recordReply records the completion of the upstream reply resp (read as
// r) and returns the reply with its routing object.
func (h *Handler) recordReply(ctx context.Context, k *call, resp *upstream.Response, attempts int, r upstreamReply) (Reply, error) {
	cand := k.dec.Candidates[0]
	body, refused := h.guardReply(k, resp.Data)
	outcome := "ok"
	if refused != nil {
		k.fire(*refused)
		outcome = OutcomeRefused
	}
	rec, cost, err := h.record(ctx, k, cand.Model, r.usage, h.cfg.HashKey.Sum(resp.Data), false, outcome, attempts, resp.FirstByte)
	if err != nil {
		return Reply{}, err
	}
	if refused != nil {
		return Reply{}, guardrail.Refusal(*refused)
	}
	return Reply{Body: body, HasRouting: r.hasRouting, Usage: r.usage, Native: r.native,
		Routing: h.routing(k, cand.Model, rec, r.usage, cost, false, attempts, cand.Predicted)}, nil
}

// serveCached answers from the cache: no upstream call, no cost, still
// recorded in the audit chain before anything is answered.
func (h *Handler) serveCached(ctx context.Context, k *call, st *Stream, hit cached) (Result, error) {
	m, ok := h.cfg.Catalog.Model(hit.model)
	if !ok {
		m = k.dec.Candidates[0].Model
	}
	if st != nil {
		// Read the reply to replay before recording: a completion that is
		// recorded is one that is answered.
		if err := st.prepareReplay(hit); err != nil {
			return Result{}, err
		}
	}
	// No upstream was called: none of its prompt cache was read or
	// written, whatever the call that filled the entry reported.
	u := hit.usage
	u.CacheRead, u.CacheWrite = 0, 0
	rec, _, err := h.record(ctx, k, m, u, h.cfg.HashKey.Sum(hit.body), true, "ok", 0, 0)
	if err != nil {
		return Result{}, err
	}
	ri := h.routing(k, m, rec, u, 0, true, 0, k.dec.Candidates[0].Predicted)
	if st != nil {
		st.routing, st.usage = ri, u
		return Result{Stream: st}, nil
	}
	return Result{Reply: Reply{Body: hit.body, HasRouting: bytes.Contains(hit.body, []byte(`"routing"`)), Routing: ri, Usage: u}}, nil
}

// objectEnd returns the index of the closing brace of a JSON object body
// (trailing whitespace allowed), or -1.
func objectEnd(body []byte) int {
	i := len(body) - 1
	for i >= 0 && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t') {
		i--
	}
	if i < 1 || body[i] != '}' {
		return -1
	}
	return i
}
