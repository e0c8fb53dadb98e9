package complete

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/webhook"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/chat"
	"github.com/arr-dev/arr/domain/guardrail"
	"github.com/arr-dev/arr/domain/routing"
)

// Guardrails (domain/guardrail) run on the caller's policy (Caller.
// Guardrails: its key's own, else its account's):
//
//   - on the prompt, before routing, admission, the cache and any
//     upstream: the size cap on the bytes of the messages' text, then the
//     PII and deny rules on each text of the messages (content strings,
//     text parts, tool-call arguments), then the webhook guardrail with
//     the texts as the rules left them. A refusal is recorded in the
//     audit chain (outcome "refused", no model, no cost, the rules that
//     fired) and answered 400 with the rule's code; redactions change the
//     messages sent upstream. A pass-through request (Native) is also
//     scanned on every string value of its body and redacted there in
//     place, so its own API's candidates are sent only what was scanned.
//   - on the output, with Policy.Output: a whole reply's message contents
//     are scanned before it is recorded; a stream's delta contents pass
//     through a guardrail.StreamFilter per choice, which holds back
//     GuardrailConfig.Window bytes (guardrail.DefaultWindow, 256) so a
//     match cut by chunk boundaries is caught; what it holds is sent with
//     the choice's finish chunk, or in a chunk of its own when the
//     upstream's stream ends without one (a stream broken off loses it). A
//     refusing rule withholds a whole reply (400) and ends a stream with
//     the rule's code. Replies are then not cached nor answered from the
//     cache, which keeps the upstream's reply as it came. Tool-call
//     arguments in replies are not scanned.
//
// Each completion's audit entry lists the rules that fired and their
// actions (audit.Completion.Guardrails), never the text they matched.

// WebhookCaller calls a webhook guardrail; *webhook.Sender is one.
type WebhookCaller interface {
	Exchange(ctx context.Context, target, secret string, m webhook.Message) (webhook.Attempt, []byte, error)
}

// GuardrailConfig configures the guardrails' enforcement.
type GuardrailConfig struct {
	// Webhook calls webhook guardrails (its SSRF guard, its signing); nil:
	// every webhook guardrail gives no verdict (its fail mode decides).
	Webhook WebhookCaller
	// Window is how many bytes of streamed output a guardrail holds back.
	// Default guardrail.DefaultWindow.
	Window int
}

// OutcomeRefused is the audit outcome of a completion a guardrail refused.
const OutcomeRefused = "refused"

// webhookSecretPurpose derives the webhook guardrails' signing key from
// the audit hash key (audit.HashKey.Derive).
const webhookSecretPurpose = "guardrail-webhook"

// engines compiles each policy once: a bounded map from the policy's JSON.
type engines struct {
	mu sync.Mutex
	m  map[string]*guardrail.Engine
}

const maxEngines = 1024

func (es *engines) get(p guardrail.Policy) (*guardrail.Engine, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("guardrails: %w", err)
	}
	es.mu.Lock()
	defer es.mu.Unlock()
	if e, ok := es.m[string(b)]; ok {
		return e, nil
	}
	e, err := guardrail.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("the stored guardrails do not compile: %w", err)
	}
	if es.m == nil || len(es.m) >= maxEngines {
		es.m = map[string]*guardrail.Engine{}
	}
	es.m[string(b)] = e
	return e, nil
}

// GuardrailSecret is the signing secret of account's webhook guardrail of
// nonce, as its settings show it.
func (h *Handler) GuardrailSecret(accountID uuid.UUID, nonce string) string {
	return WebhookSecret(h.cfg.HashKey, accountID, nonce)
}

// WebhookSecret is the signing secret of account's webhook guardrail of
// nonce under the gateway's audit hash key (`arr guardrails show
// --secret` derives it too).
func WebhookSecret(key audit.HashKey, accountID uuid.UUID, nonce string) string {
	return guardrail.WebhookSecret(key.Derive(webhookSecretPurpose), accountID, nonce)
}

// fire notes rules that fired, each once.
func (k *call) fire(fs ...guardrail.Fired) {
	for _, f := range fs {
		if !slices.Contains(k.fired, f) {
			k.fired = append(k.fired, f)
		}
	}
}

// guardPrompt runs the caller's guardrails on the prompt (see above). A
// pass-through request (Request.Native) is scanned on every string of
// the body its own API's candidates are sent (nativeTexts: text in
// messages, system, tools, documents, search and tool results, whatever
// the chat translation leaves out), then its translation, each redacted
// in place: a candidate is sent what was scanned, whichever it is.
func (h *Handler) guardPrompt(ctx context.Context, k *call, requestID string) error {
	if k.caller.Guardrails.IsZero() {
		return nil
	}
	e, err := h.engines.get(k.caller.Guardrails)
	if err != nil {
		return err
	}
	k.guard = e
	texts, err := promptTexts(k.req.Fields["messages"])
	if err != nil {
		return err
	}
	var native []string
	if k.req.Native != nil {
		if native, err = nativeTexts(k.req.Native.Body); err != nil {
			return err
		}
	}
	all := append(slices.Clone(native), texts...)
	out, refused := h.scanPrompt(ctx, k, requestID, all, len(native))
	if refused != nil {
		k.fire(*refused)
		return h.refusePrompt(ctx, k, requestID, *refused)
	}
	nativeOut, chatOut := out[:len(native)], out[len(native):]
	k.rewritten = e.ScansOutput() || (k.req.Native == nil && !slices.Equal(chatOut, texts))
	if !slices.Equal(nativeOut, native) {
		body, err := replaceNativeTexts(k.req.Native.Body, nativeOut)
		if err != nil {
			return err
		}
		n := *k.req.Native
		n.Body = body
		k.req.Native = &n
	}
	if !slices.Equal(chatOut, texts) {
		raw, err := replaceTexts(k.req.Fields["messages"], chatOut)
		if err != nil {
			return err
		}
		k.req.Fields["messages"] = raw
	}
	return nil
}

// scanPrompt runs the size cap, the rules and the webhook on texts: the
// texts to send, or the refusal. The first native of texts are a native
// body's, the rest its translation's: the size capped is the larger.
func (h *Handler) scanPrompt(ctx context.Context, k *call, requestID string, texts []string, native int) ([]string, *guardrail.Fired) {
	e := k.guard
	var size, nativeSize int64
	for i, t := range texts {
		size += int64(len(t))
		if i < native {
			nativeSize += int64(len(t))
		}
	}
	size = max(size-nativeSize, nativeSize)
	refused := e.CheckSize(size)
	out := slices.Clone(texts)
	for i := 0; refused == nil && i < len(out); i++ {
		r := e.Apply(out[i], guardrail.Prompt)
		out[i], refused = r.Text, r.Refused
		k.fire(r.Fired...)
	}
	if refused == nil && e.Policy().Webhook != nil {
		out, refused = h.askWebhook(ctx, k, requestID, out)
	}
	return out, refused
}

// refusePrompt records the refusal and returns it.
func (h *Handler) refusePrompt(ctx context.Context, k *call, requestID string, f guardrail.Fired) error {
	k.md = commands.NewMetadata("key:"+k.caller.KeyID.String(), requestID)
	if _, _, err := h.record(ctx, k, routing.Model{}, Usage{}, "", false, OutcomeRefused, 0, 0); err != nil {
		h.cfg.Logger.Error("recording a guardrail's refusal failed", "err", err, "request_id", requestID, "rule", f.Rule)
	}
	return guardrail.Refusal(f)
}

// webhookVerdict is a webhook guardrail's answer.
type webhookVerdict struct {
	Verdict string   `json:"verdict"`
	Texts   []string `json:"texts"`
}

// askWebhook sends the prompt's texts to the webhook guardrail and returns
// the texts to send on (the webhook's, when it replaced them) or the
// refusal. No verdict (no answer in time, not 2xx, not a verdict) is
// decided by the fail mode: open lets the texts through (logged as the
// webhook rule), closed refuses.
func (h *Handler) askWebhook(ctx context.Context, k *call, requestID string, texts []string) ([]string, *guardrail.Fired) {
	w := k.guard.Policy().Webhook
	refuse := &guardrail.Fired{Rule: guardrail.RuleWebhook, Action: guardrail.Refuse, Where: guardrail.Prompt}
	v, ok := h.callWebhook(ctx, k, requestID, w, texts)
	switch {
	case !ok && w.Fail == guardrail.FailOpen:
		k.fire(guardrail.Fired{Rule: guardrail.RuleWebhook, Action: guardrail.Log, Where: guardrail.Prompt})
		return texts, nil
	case !ok || v.Verdict == "refuse":
		return nil, refuse
	case v.Texts != nil:
		if !slices.Equal(v.Texts, texts) {
			k.fire(guardrail.Fired{Rule: guardrail.RuleWebhook, Action: guardrail.Redact, Where: guardrail.Prompt})
		}
		return recheckWebhookTexts(k, texts, v.Texts)
	}
	return texts, nil
}

// callWebhook makes the call; false: no verdict.
func (h *Handler) callWebhook(ctx context.Context, k *call, requestID string, w *guardrail.Webhook, texts []string) (webhookVerdict, bool) {
	if h.cfg.Guardrails.Webhook == nil {
		return webhookVerdict{}, false
	}
	// Signed at the wall clock's time, which the receiver checks the
	// signature's timestamp against (not Config.Clock's, which tests move).
	now := time.Now()
	payload, err := json.Marshal(map[string]any{"type": "guardrail.prompt", "timestamp": now.UTC().Format(time.RFC3339Nano),
		"data": map[string]any{"account_id": k.caller.AccountID, "key_id": k.caller.KeyID, "request_id": requestID, "texts": texts}})
	if err != nil {
		return webhookVerdict{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(w.TimeoutMS)*time.Millisecond)
	defer cancel()
	id := "msg_" + uuid.NewString()
	a, body, err := h.cfg.Guardrails.Webhook.Exchange(ctx, w.URL, h.GuardrailSecret(k.caller.AccountID, w.SecretNonce),
		webhook.Message{ID: id, At: now, Payload: payload})
	if err != nil || !a.OK() {
		h.cfg.Logger.Warn("the webhook guardrail gave no verdict", "request_id", requestID, "status", a.Status, "error", a.Error, "err", err)
		return webhookVerdict{}, false
	}
	var v webhookVerdict
	dec := json.NewDecoder(bytes.NewReader(body))
	if dec.Decode(&v) != nil || (v.Verdict != "allow" && v.Verdict != "refuse") || (v.Texts != nil && len(v.Texts) != len(texts)) {
		h.cfg.Logger.Warn("the webhook guardrail's answer is not a verdict", "request_id", requestID)
		return webhookVerdict{}, false
	}
	return v, true
}

// guardReply runs the output rules on a whole reply's message contents:
// the body to answer, or the refusal.
func (h *Handler) guardReply(k *call, body []byte) ([]byte, *guardrail.Fired) {
	if k.guard == nil || !k.guard.ScansOutput() {
		return body, nil
	}
	var doc map[string]json.RawMessage
	var choices []map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil || json.Unmarshal(doc["choices"], &choices) != nil {
		return body, nil // not a completion: readReply refused it already
	}
	changed := false
	for _, ch := range choices {
		var msg map[string]json.RawMessage
		var content string
		if json.Unmarshal(ch["message"], &msg) != nil || json.Unmarshal(msg["content"], &content) != nil {
			continue
		}
		r := k.guard.Apply(content, guardrail.Output)
		k.fire(r.Fired...)
		if r.Refused != nil {
			return nil, r.Refused
		}
		if r.Text != content {
			msg["content"], _ = json.Marshal(r.Text)
			ch["message"], _ = json.Marshal(msg)
			changed = true
		}
	}
	if !changed {
		return body, nil
	}
	doc["choices"], _ = json.Marshal(choices)
	out, err := json.Marshal(doc)
	if err != nil {
		return body, nil
	}
	return out, nil
}

// GuardrailStop ends a stream whose output a guardrail refused.
type GuardrailStop struct{ Fired guardrail.Fired }

func (e *GuardrailStop) Error() string { return guardrail.Refusal(e.Fired).Error() }

// Code is the refusal's code (guardrail_...).
func (e *GuardrailStop) Code() string { return e.Fired.Code() }

// guardChunk runs the output rules on a stream chunk's delta contents
// (ch is data read): the data to send, or the stop.
func (s *Stream) guardChunk(data []byte, ch *chat.ChunkSummary) ([]byte, error) {
	if s.guard == nil || !s.guard.ScansOutput() {
		return data, nil
	}
	if s.filters == nil {
		s.filters = map[int]*guardrail.StreamFilter{}
	}
	outs := map[int]string{}
	for _, c := range ch.Choices {
		f := s.filters[c.Index]
		if f == nil {
			f = s.guard.Stream(s.h.cfg.Guardrails.Window)
			s.filters[c.Index] = f
		}
		var out string
		var refused *guardrail.Fired
		if c.Delta.Content != nil {
			out, refused = f.Write(*c.Delta.Content)
		}
		if refused == nil && c.FinishReason != nil {
			var rest string
			rest, refused = f.Flush()
			out += rest
		}
		s.fire(f.Fired()...)
		if refused != nil {
			s.fire(*refused)
			return nil, &GuardrailStop{Fired: *refused}
		}
		if c.Delta.Content != nil || out != "" {
			outs[c.Index] = out
		}
	}
	if len(outs) == 0 {
		return data, nil
	}
	return setDeltaContents(data, outs), nil
}

// setDeltaContents sets choices[i].delta.content of a chunk, by choice
// index; data is returned as it was if it is not shaped as a chunk.
func setDeltaContents(data []byte, outs map[int]string) []byte {
	var doc map[string]json.RawMessage
	var choices []map[string]json.RawMessage
	if json.Unmarshal(data, &doc) != nil || json.Unmarshal(doc["choices"], &choices) != nil {
		return data
	}
	for _, ch := range choices {
		var idx int
		_ = json.Unmarshal(ch["index"], &idx)
		out, ok := outs[idx]
		if !ok {
			continue
		}
		delta := map[string]json.RawMessage{}
		_ = json.Unmarshal(ch["delta"], &delta)
		delta["content"], _ = json.Marshal(out)
		ch["delta"], _ = json.Marshal(delta)
	}
	doc["choices"], _ = json.Marshal(choices)
	b, err := json.Marshal(doc)
	if err != nil {
		return data
	}
	return b
}

// auditFired is the rules that fired, as the audit entry lists them.
func (k *call) auditFired() []audit.GuardrailFired {
	if len(k.fired) == 0 {
		return nil
	}
	out := make([]audit.GuardrailFired, len(k.fired))
	for i, f := range k.fired {
		out[i] = audit.GuardrailFired{Rule: f.Rule, Action: string(f.Action), Where: f.Where}
	}
	return out
}

// flushHeld is a chunk of what the output filters still hold when the
// upstream's stream ended without finishing its choices (nil: nothing
// held), or the stop if a refusing rule fires on it.
func (s *Stream) flushHeld() ([]byte, error) {
	var choices []any
	for _, idx := range slices.Sorted(maps.Keys(s.filters)) {
		f := s.filters[idx]
		out, refused := f.Flush()
		s.fire(f.Fired()...)
		if refused != nil {
			s.fire(*refused)
			return nil, &GuardrailStop{Fired: *refused}
		}
		if out != "" {
			choices = append(choices, map[string]any{"index": idx, "delta": map[string]any{"content": out}, "logprobs": nil, "finish_reason": nil})
		}
	}
	if len(choices) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(map[string]any{"id": s.a.id, "object": "chat.completion.chunk", "created": s.a.created, "model": s.a.model, "choices": choices})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// translatedOnly keeps, of a pass-through request (Request.Native) whose
// prompt the guardrails changed or whose output they scan, the candidates
// it is sent to translated: the guardrails redact the chat request and
// read chat replies, and a candidate of the request's own API would be
// sent the client's body as it came and answer in its own shape. A
// request left with none is refused (guardrails_need_translation): the
// tier has no model of another API.
func (k *call) translatedOnly() error {
	if !k.rewritten || k.req.Native == nil {
		return nil
	}
	kept := k.dec.Candidates[:0:0]
	for _, c := range k.dec.Candidates {
		if !k.req.nativeFor(c.Model) {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return domain.Invalid("guardrails_need_translation", "model",
			"the guardrails that redact this prompt or scan its reply run on translated requests, and the tier chosen has no model this request can be translated for; ask for another tier or model")
	}
	k.dec.Candidates = kept
	return nil
}
