package guardrail

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/arr-dev/arr/domain"
)

// Action is what a rule does when it matches.
type Action string

// The actions.
const (
	// Redact replaces the match by its placeholder and lets the request
	// go on.
	Redact Action = "redact"
	// Refuse refuses the request (the prompt) or withholds the reply (the
	// output) with a 400 naming the rule.
	Refuse Action = "refuse"
	// Log lets the text through unchanged and records that the rule fired.
	Log Action = "log"
)

// Detector names one kind of personal data the detectors find.
type Detector string

// The detectors.
const (
	Email      Detector = "email"
	Phone      Detector = "phone"
	CreditCard Detector = "credit_card"
	SSN        Detector = "ssn"
	IBAN       Detector = "iban"
	IPAddress  Detector = "ip_address"
)

// Detectors lists every detector, in the order overlapping matches are
// decided: a span claimed by an earlier detector is not another's.
func Detectors() []Detector { return []Detector{CreditCard, IBAN, SSN, Email, IPAddress, Phone} }

// Placeholder is what a redacted match of d is replaced by: [EMAIL],
// [CREDIT_CARD], ...
func (d Detector) Placeholder() string { return "[" + strings.ToUpper(string(d)) + "]" }

// DenyPlaceholder replaces a redacted deny-pattern match.
const DenyPlaceholder = "[REDACTED]"

// Bounds of a policy.
const (
	MaxDenyPatterns     = 32
	MaxDenyPatternBytes = 512
	// MaxPromptBytesCap is the largest prompt-size cap a policy may set
	// (64 MiB: above any request body the gateway reads).
	MaxPromptBytesCap  = 64 << 20
	MaxWebhookURLBytes = 2000
	// MaxWebhookTimeoutMS bounds the webhook guardrail's timeout.
	MaxWebhookTimeoutMS = 10000
	// DefaultWebhookTimeoutMS is the webhook guardrail's timeout when the
	// policy sets none.
	DefaultWebhookTimeoutMS = 2000
)

// The rule names as refusal codes and audit entries give them: "pii_" and
// the detector, and these.
const (
	RuleDenyPattern    = "deny_pattern"
	RulePromptTooLarge = "prompt_too_large"
	RuleWebhook        = "webhook"
)

// On says what a rule scans: the prompt (the default), the output (the
// replies, streamed or not) or both.
type On string

// The scopes of a rule.
const (
	OnPrompt On = "prompt"
	OnOutput On = "output"
	OnBoth   On = "both"
)

// scans reports whether a rule on o scans text found at where.
func (o On) scans(where string) bool {
	return o == OnBoth || (where == Prompt) == (o == OnPrompt || o == "")
}

// PIIRule is what to do with one detector's matches.
type PIIRule struct {
	// Type is the detector: email, phone, credit_card, ssn, iban or
	// ip_address.
	Type Detector `json:"type"`
	// Action is redact, refuse or log.
	Action Action `json:"action"`
	// On is prompt (default), output or both.
	On On `json:"on,omitempty"`
}

// DenyRule is a pattern (RE2 syntax) the text must not match.
type DenyRule struct {
	// Pattern is the RE2 regular expression (at most MaxDenyPatternBytes).
	Pattern string `json:"pattern"`
	// Action is refuse (the default), redact or log.
	Action Action `json:"action,omitempty"`
	// On is prompt (default), output or both.
	On On `json:"on,omitempty"`
}

// FailMode says what a webhook guardrail that gave no verdict (down,
// slow, an answer that is not one) comes to: open lets the request go on,
// closed refuses it.
type FailMode string

// The fail modes.
const (
	FailOpen   FailMode = "open"
	FailClosed FailMode = "closed"
)

// Webhook is the customer's guardrail endpoint: called with the prompt,
// signed per Standard Webhooks, before the upstream.
type Webhook struct {
	// URL is the absolute http(s) URL the prompt is POSTed to.
	URL string `json:"url"`
	// Fail is open or closed (default closed).
	Fail FailMode `json:"fail,omitempty"`
	// TimeoutMS bounds the call (default DefaultWebhookTimeoutMS).
	TimeoutMS int `json:"timeout_ms,omitempty"`
	// SecretNonce names the signing secret (derived by the gateway from it
	// and the account; never the secret itself).
	SecretNonce string `json:"secret_nonce,omitempty"`
}

// Policy is one account's or one key's guardrails. The zero Policy
// guards nothing.
type Policy struct {
	// PII are the detectors' rules, one per detector at most.
	PII []PIIRule `json:"pii,omitempty"`
	// Deny are the deny patterns (at most MaxDenyPatterns).
	Deny []DenyRule `json:"deny,omitempty"`
	// MaxPromptBytes refuses a prompt whose text is larger (0: no cap).
	MaxPromptBytes int64 `json:"max_prompt_bytes,omitempty"`
	// Webhook is the webhook guardrail, if any.
	Webhook *Webhook `json:"webhook,omitempty"`
}

// IsZero reports whether the policy guards nothing.
func (p Policy) IsZero() bool {
	return len(p.PII) == 0 && len(p.Deny) == 0 && p.MaxPromptBytes == 0 && p.Webhook == nil
}

// Equal reports whether two policies are the same.
func (p Policy) Equal(o Policy) bool {
	sameHook := (p.Webhook == nil) == (o.Webhook == nil) && (p.Webhook == nil || *p.Webhook == *o.Webhook)
	return slices.Equal(p.PII, o.PII) && slices.Equal(p.Deny, o.Deny) && p.MaxPromptBytes == o.MaxPromptBytes && sameHook
}

// Normalize fills in the defaults: rules on the prompt, a deny rule's
// refuse, the webhook's closed fail mode and its timeout.
func (p Policy) Normalize() Policy {
	p.PII, p.Deny = slices.Clone(p.PII), slices.Clone(p.Deny)
	for i := range p.PII {
		if p.PII[i].On == "" {
			p.PII[i].On = OnPrompt
		}
	}
	for i := range p.Deny {
		if p.Deny[i].Action == "" {
			p.Deny[i].Action = Refuse
		}
		if p.Deny[i].On == "" {
			p.Deny[i].On = OnPrompt
		}
	}
	if p.Webhook != nil {
		w := *p.Webhook
		if w.Fail == "" {
			w.Fail = FailClosed
		}
		if w.TimeoutMS == 0 {
			w.TimeoutMS = DefaultWebhookTimeoutMS
		}
		p.Webhook = &w
	}
	return p
}

func invalid(field, format string, a ...any) error {
	return domain.Invalid("invalid_guardrails", field, format, a...)
}

func validAction(a Action) bool { return a == Redact || a == Refuse || a == Log }

func validOn(o On) bool { return o == OnPrompt || o == OnOutput || o == OnBoth }

// Validate checks a normalized policy.
func (p Policy) Validate() error {
	for i, r := range p.PII {
		if !slices.Contains(Detectors(), r.Type) {
			return invalid("pii", "pii[%d].type must be one of email, phone, credit_card, ssn, iban, ip_address; got %q", i, r.Type)
		}
		if !validAction(r.Action) {
			return invalid("pii", "pii[%d].action must be redact, refuse or log; got %q", i, r.Action)
		}
		if !validOn(r.On) {
			return invalid("pii", "pii[%d].on must be prompt, output or both; got %q", i, r.On)
		}
		if slices.ContainsFunc(p.PII[:i], func(o PIIRule) bool { return o.Type == r.Type }) {
			return invalid("pii", "pii lists %s twice", r.Type)
		}
	}
	if len(p.Deny) > MaxDenyPatterns {
		return invalid("deny", "at most %d deny patterns; got %d", MaxDenyPatterns, len(p.Deny))
	}
	for i, d := range p.Deny {
		if d.Pattern == "" || len(d.Pattern) > MaxDenyPatternBytes || !utf8.ValidString(d.Pattern) {
			return invalid("deny", "deny[%d].pattern must be an RE2 pattern of 1 to %d bytes", i, MaxDenyPatternBytes)
		}
		if _, err := regexp.Compile(d.Pattern); err != nil {
			return invalid("deny", "deny[%d].pattern is not an RE2 pattern: %v", i, err)
		}
		if !validAction(d.Action) {
			return invalid("deny", "deny[%d].action must be refuse, redact or log; got %q", i, d.Action)
		}
		if !validOn(d.On) {
			return invalid("deny", "deny[%d].on must be prompt, output or both; got %q", i, d.On)
		}
	}
	if p.MaxPromptBytes < 0 || p.MaxPromptBytes > MaxPromptBytesCap {
		return invalid("max_prompt_bytes", "max_prompt_bytes must be from 1 to %d, or 0 for no cap; got %d", MaxPromptBytesCap, p.MaxPromptBytes)
	}
	if p.Webhook != nil {
		return p.Webhook.validate()
	}
	return nil
}

func (w Webhook) validate() error {
	u, err := url.Parse(w.URL)
	if w.URL == "" || len(w.URL) > MaxWebhookURLBytes || err != nil || (u.Scheme != "http" && u.Scheme != "https") ||
		u.Host == "" || u.User != nil || u.Fragment != "" {
		return invalid("webhook.url", "webhook.url must be an absolute http(s) URL of at most %d bytes, without user info or fragment", MaxWebhookURLBytes)
	}
	if w.Fail != FailOpen && w.Fail != FailClosed {
		return invalid("webhook.fail", "webhook.fail must be open or closed; got %q", w.Fail)
	}
	if w.TimeoutMS < 1 || w.TimeoutMS > MaxWebhookTimeoutMS {
		return invalid("webhook.timeout_ms", "webhook.timeout_ms must be from 1 to %d; got %d", MaxWebhookTimeoutMS, w.TimeoutMS)
	}
	return nil
}

// Fired is one rule that fired: its name (pii_credit_card, deny_pattern,
// prompt_too_large, webhook) and what it did; never the text it saw.
type Fired struct {
	Rule   string `json:"rule"`
	Action Action `json:"action"`
	// Where is prompt or output.
	Where string `json:"where"`
}

// Code is the refusal's error code: guardrail_ and the rule.
func (f Fired) Code() string { return "guardrail_" + f.Rule }

// Refusal is a guardrail's refusal, as a domain error: invalid (400),
// its code naming the rule.
func Refusal(f Fired) error {
	msg := map[string]string{
		RulePromptTooLarge: "the prompt is larger than the guardrails' cap",
		RuleDenyPattern:    "the " + f.Where + " matches a deny pattern of the guardrails",
		RuleWebhook:        "the guardrail webhook refused the prompt",
	}[f.Rule]
	if msg == "" {
		msg = "the " + f.Where + " holds " + strings.ReplaceAll(strings.TrimPrefix(f.Rule, "pii_"), "_", " ") + " data, which the guardrails refuse"
	}
	return domain.Invalid(f.Code(), "", "%s (rule %s)", msg, f.Rule)
}

// Actions lists every action.
func Actions() []Action { return []Action{Redact, Refuse, Log} }

// Ons lists every rule scope.
func Ons() []On { return []On{OnPrompt, OnOutput, OnBoth} }

// FailModes lists the webhook guardrail's fail modes.
func FailModes() []FailMode { return []FailMode{FailOpen, FailClosed} }
