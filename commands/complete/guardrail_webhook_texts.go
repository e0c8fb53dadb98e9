package complete

import (
	"github.com/arr-dev/arr/domain/guardrail"
)

// recheckWebhookTexts holds the texts a webhook guardrail sent back in
// place of the prompt's (sent) to the local rules: a webhook that grows
// the prompt past the size cap refuses it (prompt_too_large), and its
// texts pass the PII and deny rules as the client's did (a refusal
// refuses, a redaction redacts), so a webhook cannot put back what they
// took out or add what they refuse.
func recheckWebhookTexts(k *call, sent, texts []string) ([]string, *guardrail.Fired) {
	var before, after int64
	for _, t := range sent {
		before += int64(len(t))
	}
	for _, t := range texts {
		after += int64(len(t))
	}
	if refused := k.guard.CheckSize(after); refused != nil && after > before {
		return nil, refused
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		r := k.guard.Apply(t, guardrail.Prompt)
		k.fire(r.Fired...)
		if r.Refused != nil {
			return nil, r.Refused
		}
		out[i] = r.Text
	}
	return out, nil
}
