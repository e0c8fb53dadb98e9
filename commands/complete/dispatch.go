package complete

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/arr-dev/arr/adapters/upstream"
	"github.com/arr-dev/arr/domain/routing"
)

// UpstreamFailure says every candidate failed (or the one that answered
// sent something that is not a chat completion).
type UpstreamFailure struct {
	Attempts []string
	// Unconfigured counts the attempts skipped because their model has no
	// upstream configured (upstream.ErrNotConfigured): when that is every
	// attempt, retrying cannot help and the operator must configure one.
	Unconfigured int
}

func (e *UpstreamFailure) Error() string {
	if e.Unconfigured > 0 && e.Unconfigured == len(e.Attempts) {
		return fmt.Sprintf("no upstream is configured for any model this request can be routed to (%s): start the gateway with "+
			"ARR_UPSTREAM_BASE_URL set to an OpenAI-compatible server (Ollama, vLLM, llama.cpp; with ARR_UPSTREAM_MODEL naming its model) "+
			"or with a provider's API key set", strings.Join(e.Attempts, "; "))
	}
	return fmt.Sprintf("no upstream could answer (%d tried: %s); retry shortly", len(e.Attempts), strings.Join(e.Attempts, "; "))
}

// Add records a failed attempt of model.
func (e *UpstreamFailure) Add(model string, err error) {
	e.Attempts = append(e.Attempts, fmt.Sprintf("%s: %v", model, errors.Unwrap(err)))
	if errors.Is(err, upstream.ErrNotConfigured) {
		e.Unconfigured++
	}
}

// Refused is an upstream's refusal of the request itself (a 4xx other
// than 408/429): its status and body are the answer to pass on.
type Refused struct {
	Status int
	Body   []byte
	Err    error
	// API is the refusing upstream's (routing.APIAnthropic: Body is
	// Anthropic's error body, for a client of that API as it is).
	API string
}

func (e *Refused) Error() string { return e.Err.Error() }

func (e *Refused) Unwrap() error { return e.Err }

// dispatch tries the candidates in order until one answers: on a 5xx,
// 429, timeout, connection failure or open breaker (for a stream: also a
// stream that breaks before its first event) it moves on, as it does
// past a candidate whose API cannot be told the request (its
// translation's refusal, answered when no later candidate answers); a
// 4xx of the request's own is Refused, in OpenAI's shape for a chat
// request (chatRefusal). It leaves the candidate that answered first in
// k.dec.Candidates.
func (h *Handler) dispatch(ctx context.Context, k *call) (*upstream.Response, int, error) {
	failure := &UpstreamFailure{}
	var refusal error // the first translation's refusal (wire.go)
	for i, cand := range k.dec.Candidates {
		ureq, native, err := k.req.upstreamRequest(cand)
		if err != nil && !native && translationRefusal(err) && i+1 < len(k.dec.Candidates) {
			// What this API cannot be told another may: the next
			// candidate is tried, and the refusal answered if none can.
			refusal = cmp.Or(refusal, err)
			continue
		}
		if err != nil {
			return nil, i, cmp.Or(refusal, err)
		}
		resp, err := h.cfg.Upstream.Do(ctx, cand.Model, ureq)
		if err == nil {
			h.m.upstream.WithLabelValues(cand.Model.ID).Observe(resp.FirstByte.Seconds())
		}
		// An Anthropic stream is answered once its first event came (Do).
		if err == nil && k.req.Stream && !native {
			err = resp.Stream.Peek()
			if err != nil {
				resp.Stream.Close()
				err = &upstream.Error{Model: cand.Model.ID, Retryable: true, Err: err}
			}
		}
		if err == nil {
			k.dec.Candidates, k.native = k.dec.Candidates[i:], native
			return resp, i + 1, nil
		}
		var ue *upstream.Error
		if errors.As(err, &ue) && !ue.Retryable {
			if native {
				body := scrubRefusal(ue.Body, cand.Model.UpstreamModel, cmp.Or(k.req.Model, cand.Model.ID))
				return nil, i + 1, &Refused{Status: ue.Status, Body: body, Err: ue, API: routing.APIAnthropic}
			}
			r := chatRefusal(cand.Model, ue)
			r.Body = scrubRefusal(r.Body, cand.Model.UpstreamModel, cmp.Or(k.req.Model, cand.Model.ID))
			return nil, i + 1, r
		}
		if ctx.Err() != nil {
			if cause := gatewayCut(ctx); cause != nil {
				return nil, i + 1, cause
			}
			return nil, i + 1, ctx.Err()
		}
		failure.Add(cand.Model.ID, err)
		h.m.failovers.WithLabelValues(cand.Model.ID).Inc()
		h.cfg.Logger.Warn("upstream failed; trying the next", "model", cand.Model.ID, "err", err, "request_id", k.md.RequestID)
	}
	if refusal != nil && len(failure.Attempts) == 0 {
		return nil, 0, refusal
	}
	return nil, len(failure.Attempts), failure
}

// scrubRefusal is an upstream's refusal body as the client is shown it:
// the catalog's upstream_model (which upstreams name in their messages,
// "... output tokens for claude-sonnet-4-0") replaced by shown, the model
// the client asked for, in every string, and the upstream's own
// request_id left out (a body that is not a JSON object: the model
// replaced only).
func scrubRefusal(body []byte, upstreamModel, shown string) []byte {
	if upstreamModel == "" || upstreamModel == shown {
		upstreamModel = ""
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&doc) != nil || doc == nil {
		if upstreamModel == "" {
			return body
		}
		return bytes.ReplaceAll(body, []byte(upstreamModel), []byte(shown))
	}
	delete(doc, "request_id")
	out := walkStrings(doc, func(s string) string {
		if upstreamModel == "" {
			return s
		}
		return strings.ReplaceAll(s, upstreamModel, shown)
	})
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(out) != nil {
		return body
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
