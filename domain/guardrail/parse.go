package guardrail

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain"
)

// webhookInput is a webhook guardrail as a client writes it: without the
// secret's nonce, which the gateway makes.
type webhookInput struct {
	URL       string   `json:"url"`
	Fail      FailMode `json:"fail,omitempty"`
	TimeoutMS int      `json:"timeout_ms,omitempty"`
}

type policyInput struct {
	PII            []PIIRule     `json:"pii"`
	Deny           []DenyRule    `json:"deny"`
	MaxPromptBytes int64         `json:"max_prompt_bytes"`
	Webhook        *webhookInput `json:"webhook"`
}

// ParsePolicy reads a policy as the API and the CLI take it (the JSON of
// Policy without the webhook's secret_nonce), strictly: an unknown field
// is refused. The policy is normalized and checked.
func ParsePolicy(raw []byte) (Policy, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var in policyInput
	if err := dec.Decode(&in); err != nil {
		return Policy{}, domain.Invalid("invalid_guardrails", "", "the guardrails must be a JSON object with pii, deny, max_prompt_bytes and webhook: %v", err)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return Policy{}, domain.Invalid("invalid_guardrails", "", "the guardrails must be one JSON object")
	}
	p := Policy{PII: in.PII, Deny: in.Deny, MaxPromptBytes: in.MaxPromptBytes}
	if in.Webhook != nil {
		p.Webhook = &Webhook{URL: in.Webhook.URL, Fail: in.Webhook.Fail, TimeoutMS: in.Webhook.TimeoutMS}
	}
	p = p.Normalize()
	return p, p.Validate()
}

// WebhookSecret is the Standard Webhooks secret (whsec_ and the base64 of
// 24 bytes) a webhook guardrail of account is signed with: derived from
// the gateway's key and the policy's nonce, so no event holds it and a
// new URL (a new nonce) gets a new one.
func WebhookSecret(key []byte, accountID uuid.UUID, nonce string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("guardrail webhook\x00" + accountID.String() + "\x00" + nonce))
	return "whsec_" + base64.StdEncoding.EncodeToString(m.Sum(nil)[:24])
}
