package complete

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/arr-dev/arr/domain/guardrail"
)

// toolFields are the request fields besides the messages whose strings
// the model reads as prompt text: the tools offered (names, descriptions,
// parameter schemas' descriptions and enums) and the legacy functions.
var toolFields = []string{"tools", "functions"}

// guardTools runs the prompt's PII and deny rules on every string of the
// tool fields (after guardPrompt, which compiled the engine): a refusal
// is recorded and returned as guardPrompt's are; a redaction rewrites the
// field (and so, as a prompt redaction does, keeps a pass-through
// request to translated candidates). Neither the size cap nor the
// webhook see these strings.
func (h *Handler) guardTools(ctx context.Context, k *call, requestID string) error {
	if k.guard == nil || !k.guard.Scans(guardrail.Prompt) {
		return nil
	}
	for _, f := range toolFields {
		raw, ok := k.req.Fields[f]
		if !ok {
			continue
		}
		out, refused, err := h.scanToolField(k, raw)
		if err != nil {
			return err
		}
		if refused != nil {
			k.fire(*refused)
			return h.refusePrompt(ctx, k, requestID, *refused)
		}
		if out != nil {
			k.req.Fields[f], k.rewritten = out, true
		}
	}
	return nil
}

// scanToolField scans each string value of one field: the field
// rewritten (nil: unchanged), or the refusal.
func (h *Handler) scanToolField(k *call, raw json.RawMessage) (json.RawMessage, *guardrail.Fired, error) {
	v, err := decodeMessages(raw)
	if err != nil {
		return nil, nil, nil // not JSON the guardrails read: the upstream refuses it as sent
	}
	var refused *guardrail.Fired
	changed := false
	v = walkToolStrings(v, func(s string) string {
		if refused != nil {
			return s
		}
		r := k.guard.Apply(s, guardrail.Prompt)
		k.fire(r.Fired...)
		refused, changed = r.Refused, changed || r.Text != s
		return r.Text
	})
	if refused != nil || !changed {
		return nil, refused, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("guardrails: %w", err)
	}
	return b, nil, nil
}

// walkToolStrings calls fn on each string value (not object keys) of a
// decoded JSON value, in document order, and sets each to what it
// returns.
func walkToolStrings(v any, fn func(string) string) any {
	switch x := v.(type) {
	case string:
		return fn(x)
	case []any:
		for i := range x {
			x[i] = walkToolStrings(x[i], fn)
		}
	case map[string]any:
		for _, key := range sortedKeys(x) {
			x[key] = walkToolStrings(x[key], fn)
		}
	}
	return v
}
