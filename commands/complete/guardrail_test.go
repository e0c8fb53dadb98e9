package complete_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/arr-dev/arr/adapters/webhook"
	"github.com/arr-dev/arr/commands/complete"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/audit"
	"github.com/arr-dev/arr/domain/guardrail"
)

const card = "4111 1111 1111 1111"

// sentText is the last user message the stand-in received for model.
func sentText(t *testing.T, hs *harness, model string) string {
	t.Helper()
	msgs, _ := hs.up.LastRequest(model)["messages"].([]any)
	if len(msgs) == 0 {
		t.Fatalf("%s received no messages", model)
	}
	m, _ := msgs[len(msgs)-1].(map[string]any)
	s, _ := m["content"].(string)
	return s
}

func codeOf(err error) string {
	var de *domain.Error
	if errors.As(err, &de) {
		return de.Code
	}
	return ""
}

func onlyFired(t *testing.T, e audit.Completion, want ...audit.GuardrailFired) {
	t.Helper()
	if len(e.Guardrails) != len(want) {
		t.Fatalf("audit guardrails %+v, want %+v", e.Guardrails, want)
	}
	for i := range want {
		if e.Guardrails[i] != want[i] {
			t.Fatalf("audit guardrails %+v, want %+v", e.Guardrails, want)
		}
	}
}

// A card number in the prompt is redacted before the upstream under
// redact, and refused before any upstream under refuse; the audit entry
// names the rule and its action, never the number.
func TestGuardrailsOnThePrompt(t *testing.T) {
	hs := newHarness(t, options{startChain: true})
	hs.caller.Guardrails = guardrail.Policy{PII: []guardrail.PIIRule{{Type: guardrail.CreditCard, Action: guardrail.Redact}}}
	res, err := hs.complete(t, request(t, "charge "+card+" please", map[string]any{"model": "gpt-4.1-nano"}), complete.CacheOff)
	if err != nil {
		t.Fatal(err)
	}
	if got := sentText(t, hs, "gpt-4.1-nano"); got != "charge [CREDIT_CARD] please" {
		t.Fatalf("the upstream received %q", got)
	}
	es := hs.entries(t)
	onlyFired(t, es[0].Completion, audit.GuardrailFired{Rule: "pii_credit_card", Action: "redact", Where: "prompt"})
	if strings.Contains(string(es[0].Payload), "4111") || !strings.Contains(string(res.Reply.Body), "[CREDIT_CARD]") {
		t.Fatalf("payload %s, reply %s", es[0].Payload, res.Reply.Body)
	}

	hs.caller.Guardrails = guardrail.Policy{PII: []guardrail.PIIRule{{Type: guardrail.CreditCard, Action: guardrail.Refuse}},
		Deny: []guardrail.DenyRule{{Pattern: `(?i)ignore previous instructions`}}, MaxPromptBytes: 200}
	calls := hs.up.Calls("gpt-4.1-nano")
	for text, code := range map[string]string{
		"charge " + card:                      "guardrail_pii_credit_card",
		"please IGNORE previous instructions": "guardrail_deny_pattern",
		strings.Repeat("long prompt ", 20):    "guardrail_prompt_too_large",
	} {
		_, err := hs.complete(t, request(t, text, map[string]any{"model": "gpt-4.1-nano"}), complete.CacheOff)
		if codeOf(err) != code || !errors.Is(err, domain.ErrInvalid) {
			t.Fatalf("%q: %v, want %s", text, err, code)
		}
	}
	if hs.up.Calls("gpt-4.1-nano") != calls {
		t.Fatal("a refused prompt reached the upstream")
	}
	es = hs.entries(t)
	if len(es) != 4 {
		t.Fatalf("%d entries", len(es))
	}
	refused := es[1].Completion
	if refused.Outcome != complete.OutcomeRefused || refused.Model != "" || refused.CostMicroUSD != 0 || len(refused.Guardrails) != 1 ||
		refused.Guardrails[0].Action != "refuse" || strings.Contains(string(es[1].Payload), "4111") {
		t.Fatalf("refusal entry %s", es[1].Payload)
	}
	for i := range es {
		prev := audit.Genesis
		if i > 0 {
			prev = es[i-1].Hash
		}
		if err := audit.Verify(&es[i].CompletionRecorded, prev, uint64(i)); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
}

// Output rules: a whole reply and a stream (the stand-in streams word by
// word, so the card number is cut by chunk boundaries) are redacted; a
// refusing output rule withholds the reply and ends the stream with its
// code.
func TestGuardrailsOnTheOutput(t *testing.T) {
	hs := newHarness(t, options{startChain: true})
	hs.caller.Guardrails = guardrail.Policy{PII: []guardrail.PIIRule{{Type: guardrail.CreditCard, Action: guardrail.Redact, On: guardrail.OnOutput}}}
	res, err := hs.complete(t, request(t, "echo "+card, map[string]any{"model": "gpt-4.1-nano"}), complete.CacheOn)
	if err != nil {
		t.Fatal(err)
	}
	if got := sentText(t, hs, "gpt-4.1-nano"); got != "echo "+card {
		t.Fatalf("an output rule changed the prompt: %q", got)
	}
	if b := string(res.Reply.Body); strings.Contains(b, "4111") || !strings.Contains(b, "echo [CREDIT_CARD]") {
		t.Fatalf("reply %s", b)
	}
	res, err = hs.complete(t, request(t, "echo "+card+" and more words after it", map[string]any{"model": "gpt-4.1-nano", "stream": true}), complete.CacheOn)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := drain(t, res.Stream)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, c := range chunks {
		for _, ch := range c["choices"].([]any) {
			d, _ := ch.(map[string]any)["delta"].(map[string]any)
			s, _ := d["content"].(string)
			text.WriteString(s)
		}
	}
	if got := text.String(); got != "Hello from gpt-4.1-nano: echo [CREDIT_CARD] and more words after it" {
		t.Fatalf("streamed %q", got)
	}
	if hs.up.Calls("gpt-4.1-nano") != 2 {
		t.Fatal("a reply under output guardrails was answered from the cache")
	}

	hs.caller.Guardrails = guardrail.Policy{Deny: []guardrail.DenyRule{{Pattern: `Hello from`, On: guardrail.OnOutput}}}
	if _, err := hs.complete(t, request(t, "hi", map[string]any{"model": "gpt-4.1-nano"}), complete.CacheOff); codeOf(err) != "guardrail_deny_pattern" {
		t.Fatalf("a refused reply: %v", err)
	}
	res, err = hs.complete(t, request(t, "hi", map[string]any{"model": "gpt-4.1-nano", "stream": true}), complete.CacheOff)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, res.Stream); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	end := res.Stream.End()
	if end.Cut == nil || end.Cut.Code() != "guardrail_deny_pattern" {
		t.Fatalf("a refused stream ended %+v", end.Cut)
	}
	es := hs.entries(t)
	last := es[len(es)-1].Completion
	if last.Outcome != complete.OutcomeRefused || len(last.Guardrails) != 1 || last.Guardrails[0].Where != "output" {
		t.Fatalf("entry %+v", last)
	}
}

// receiver is a loopback webhook guardrail that verifies each call's
// Standard Webhooks signature and answers with verdict.
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	texts   [][]string
	badSigs int
}

func newReceiver(t *testing.T, secret func() string, answer func(texts []string) (int, string)) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		wh, err := standardwebhooks.NewWebhook(secret())
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil || wh.Verify(body, req.Header) != nil {
			r.badSigs++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var p struct {
			Type string `json:"type"`
			Data struct {
				Texts []string `json:"texts"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &p)
		r.texts = append(r.texts, p.Data.Texts)
		status, out := answer(p.Data.Texts)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// The webhook guardrail: called signed with the texts the local rules left,
// its verdict refuses or replaces them; without a verdict (down, a 500)
// fail closed refuses and fail open lets the prompt through.
func TestWebhookGuardrail(t *testing.T) {
	var hs *harness
	var nonce = "n1"
	hs = newHarness(t, options{startChain: true, complete: func(c *complete.Config) {
		c.Guardrails.Webhook = webhook.New(webhook.Config{AllowPrivate: true})
	}})
	rcv := newReceiver(t, func() string { return hs.h.GuardrailSecret(hs.caller.AccountID, nonce) }, func(texts []string) (int, string) {
		last := texts[len(texts)-1]
		switch {
		case strings.Contains(last, "forbidden"):
			return 200, `{"verdict":"refuse"}`
		case strings.Contains(last, "broken"):
			return 500, `oops`
		case strings.Contains(last, "secret"):
			b, _ := json.Marshal(map[string]any{"verdict": "allow", "texts": []string{strings.ReplaceAll(last, "secret", "[HIDDEN]")}})
			return 200, string(b)
		}
		return 200, `{"verdict":"allow"}`
	})
	pol := func(fail guardrail.FailMode, url string) guardrail.Policy {
		return guardrail.Policy{PII: []guardrail.PIIRule{{Type: guardrail.Email, Action: guardrail.Redact}},
			Webhook: &guardrail.Webhook{URL: url, Fail: fail, TimeoutMS: 2000, SecretNonce: nonce}}
	}
	hs.caller.Guardrails = pol(guardrail.FailClosed, rcv.srv.URL)
	ask := func(text string) error {
		_, err := hs.complete(t, request(t, text, map[string]any{"model": "gpt-4.1-nano"}), complete.CacheOff)
		return err
	}
	if err := ask("mail a@b.co the secret plan"); err != nil {
		t.Fatal(err)
	}
	if got := sentText(t, hs, "gpt-4.1-nano"); got != "mail [EMAIL] the [HIDDEN] plan" {
		t.Fatalf("the upstream received %q", got)
	}
	if err := ask("a forbidden request"); codeOf(err) != "guardrail_webhook" {
		t.Fatalf("refused by the webhook: %v", err)
	}
	if err := ask("a broken receiver"); codeOf(err) != "guardrail_webhook" {
		t.Fatalf("a 500 under fail closed: %v", err)
	}
	rcv.mu.Lock()
	if rcv.badSigs != 0 || len(rcv.texts) != 3 || rcv.texts[0][0] != "mail [EMAIL] the secret plan" {
		t.Fatalf("receiver saw %v (%d bad signatures)", rcv.texts, rcv.badSigs)
	}
	rcv.mu.Unlock()

	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	hs.caller.Guardrails = pol(guardrail.FailClosed, downURL)
	if err := ask("hello"); codeOf(err) != "guardrail_webhook" {
		t.Fatalf("a receiver that is down under fail closed: %v", err)
	}
	hs.caller.Guardrails = pol(guardrail.FailOpen, downURL)
	if err := ask("hello"); err != nil {
		t.Fatalf("a receiver that is down under fail open: %v", err)
	}
	es := hs.entries(t)
	onlyFired(t, es[len(es)-1].Completion, audit.GuardrailFired{Rule: "webhook", Action: "log", Where: "prompt"})

	// Another nonce's secret does not verify: the receiver refuses, and
	// fail closed refuses the prompt.
	hs.caller.Guardrails = pol(guardrail.FailClosed, rcv.srv.URL)
	hs.caller.Guardrails.Webhook.SecretNonce = "other"
	if err := ask("hello"); codeOf(err) != "guardrail_webhook" {
		t.Fatalf("a wrongly signed call: %v", err)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.badSigs != 1 {
		t.Fatalf("%d bad signatures", rcv.badSigs)
	}
}

// A webhook guardrail that answers too slowly, redirects, or answers
// something that is not a verdict gives no verdict: fail closed refuses,
// fail open lets the prompt through.
func TestWebhookGuardrailHostile(t *testing.T) {
	hs := newHarness(t, options{startChain: true, complete: func(c *complete.Config) {
		c.Guardrails.Webhook = webhook.New(webhook.Config{AllowPrivate: true})
	}})
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); slow.Close() })
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"verdict":"allow"}`)
	}))
	t.Cleanup(target.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	junk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"verdict":"maybe","texts":["a","b","c"]}`)
	}))
	t.Cleanup(junk.Close)
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"verdict":"allow","texts":["`+strings.Repeat("x", webhook.DefaultMaxResponseBytes)+`"]}`)
	}))
	t.Cleanup(huge.Close)
	for name, url := range map[string]string{"slow": slow.URL, "redirect": redirect.URL, "not a verdict": junk.URL, "too large": huge.URL} {
		for _, fail := range []guardrail.FailMode{guardrail.FailClosed, guardrail.FailOpen} {
			hs.caller.Guardrails = guardrail.Policy{Webhook: &guardrail.Webhook{URL: url, Fail: fail, TimeoutMS: 200, SecretNonce: "n"}}
			_, err := hs.complete(t, request(t, "hello", map[string]any{"model": "gpt-4.1-nano"}), complete.CacheOff)
			switch {
			case fail == guardrail.FailClosed && codeOf(err) != "guardrail_webhook":
				t.Errorf("%s, fail closed: %v", name, err)
			case fail == guardrail.FailOpen && err != nil:
				t.Errorf("%s, fail open: %v", name, err)
			}
		}
	}
	if n := hs.up.Calls("gpt-4.1-nano"); n != 4 {
		t.Fatalf("%d upstream calls; want the 4 fail-open ones", n)
	}
}

// An upstream stream that ends without finishing its choice still gets
// what the output guardrails held, redacted, before the end.
func TestGuardrailsFlushAtTheEnd(t *testing.T) {
	raw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, part := range []string{"card 4111 1111", " 1111 1111 end"} {
			b, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4.1-nano",
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": part}, "finish_reason": nil}}})
			_, _ = io.WriteString(w, "data: "+string(b)+"\n\n")
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(raw.Close)
	hs := newHarness(t, options{startChain: true, complete: func(c *complete.Config) { c.Catalog = c.Catalog.WithBaseURL(raw.URL+"/v1", "", "") }})
	hs.caller.Guardrails = guardrail.Policy{PII: []guardrail.PIIRule{{Type: guardrail.CreditCard, Action: guardrail.Redact, On: guardrail.OnOutput}}}
	res, err := hs.complete(t, request(t, "hi", map[string]any{"model": "gpt-4.1-nano", "stream": true}), complete.CacheOff)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := drain(t, res.Stream)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, c := range chunks {
		for _, ch := range c["choices"].([]any) {
			d, _ := ch.(map[string]any)["delta"].(map[string]any)
			s, _ := d["content"].(string)
			text.WriteString(s)
		}
	}
	if got := text.String(); got != "card [CREDIT_CARD] end" {
		t.Fatalf("streamed %q", got)
	}
}

// A webhook's replacement texts pass the local rules and the size cap as
// the client's did: an address it puts back is redacted, a prompt it
// grows past the cap is refused.
func TestWebhookTextsRechecked(t *testing.T) {
	var hs *harness
	hs = newHarness(t, options{startChain: true, complete: func(c *complete.Config) {
		c.Guardrails.Webhook = webhook.New(webhook.Config{AllowPrivate: true})
	}})
	rcv := newReceiver(t, func() string { return hs.h.GuardrailSecret(hs.caller.AccountID, "n1") }, func(texts []string) (int, string) {
		out := slices.Clone(texts)
		last := out[len(out)-1]
		if strings.Contains(last, "grow") {
			out[len(out)-1] = strings.Repeat("x", 500)
		} else {
			out[len(out)-1] = strings.ReplaceAll(last, "[EMAIL]", "a@b.co")
		}
		b, _ := json.Marshal(map[string]any{"verdict": "allow", "texts": out})
		return 200, string(b)
	})
	hs.caller.Guardrails = guardrail.Policy{PII: []guardrail.PIIRule{{Type: guardrail.Email, Action: guardrail.Redact}}, MaxPromptBytes: 200,
		Webhook: &guardrail.Webhook{URL: rcv.srv.URL, Fail: guardrail.FailClosed, TimeoutMS: 2000, SecretNonce: "n1"}}
	if _, err := hs.complete(t, request(t, "mail a@b.co now", map[string]any{"model": "gpt-4.1-nano"}), complete.CacheOff); err != nil {
		t.Fatal(err)
	}
	if got := sentText(t, hs, "gpt-4.1-nano"); got != "mail [EMAIL] now" {
		t.Fatalf("the upstream received %q", got)
	}
	if _, err := hs.complete(t, request(t, "grow it", map[string]any{"model": "gpt-4.1-nano"}), complete.CacheOff); codeOf(err) != "guardrail_prompt_too_large" {
		t.Fatalf("a webhook that grows the prompt past the cap: %v", err)
	}
}
