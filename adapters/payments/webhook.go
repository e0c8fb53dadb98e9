package payments

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
)

// The webhook event types arr acts on; every other type is ignored.
const (
	EventCheckoutCompleted           = "checkout.session.completed"
	EventCheckoutAsyncPaymentSucceed = "checkout.session.async_payment_succeeded"
	EventSubscriptionUpdated         = "customer.subscription.updated"
	EventSubscriptionDeleted         = "customer.subscription.deleted"
)

// Event is a verified webhook, reduced to what arr acts on. Fields that do
// not apply to the event's type are empty.
type Event struct {
	// ID is Stripe's event id (evt_…); it is the Reference of the plan
	// change, so a replayed webhook changes nothing twice.
	ID      string
	Type    string
	Created time.Time
	// AccountID is the account id arr put on the session or subscription
	// (client_reference_id or metadata account_id), unparsed; may be empty.
	AccountID string
	// Plan is the plan the object is for: metadata plan, else the price's
	// lookup_key, else the catalog plan with that monthly price. Empty when
	// none matches.
	Plan           account.Plan
	CustomerID     string
	SubscriptionID string
	// Mode is a Checkout Session's mode (subscription, payment, setup).
	Mode string
	// Status is a Checkout Session's payment_status (paid, unpaid,
	// no_payment_required) or a subscription's status (active, trialing,
	// past_due, canceled, …).
	Status string
}

// ErrBadSignature is the error of a webhook whose signature does not verify.
var ErrBadSignature = domain.Invalid("invalid_signature", "Stripe-Signature",
	"the webhook's Stripe-Signature header is missing, malformed, too old or does not match the payload")

// ParseWebhook verifies payload against the Stripe-Signature header with the
// webhook secret (within WebhookTolerance) and decodes it. Events of any
// API version are accepted: only a few long-stable fields are read. A bad
// or missing signature, or no configured secret, is ErrBadSignature.
func (c *Client) ParseWebhook(payload []byte, signature string) (Event, error) {
	if !c.WebhooksEnabled() || signature == "" {
		return Event{}, ErrBadSignature
	}
	if err := webhook.ValidatePayloadWithTolerance(payload, signature, c.cfg.WebhookSecret, c.cfg.WebhookTolerance); err != nil {
		return Event{}, ErrBadSignature
	}
	se, err := webhook.ConstructEventWithOptions(payload, signature, c.cfg.WebhookSecret, webhook.ConstructEventOptions{
		Tolerance: c.cfg.WebhookTolerance, IgnoreAPIVersionMismatch: true,
	})
	if err != nil {
		return Event{}, domain.Invalid("invalid_payload", "body", "the webhook body is not a Stripe event (snapshot payload expected): %v", err)
	}
	e := Event{ID: se.ID, Type: string(se.Type), Created: time.Unix(se.Created, 0).UTC()}
	if se.Data == nil {
		return e, nil
	}
	raw := se.Data.Raw
	switch e.Type {
	case EventCheckoutCompleted, EventCheckoutAsyncPaymentSucceed:
		var s checkoutSession
		if err := json.Unmarshal(raw, &s); err != nil {
			return Event{}, domain.Invalid("invalid_payload", "body", "the checkout session in the webhook does not decode: %v", err)
		}
		e.AccountID = s.ClientReferenceID
		if e.AccountID == "" {
			e.AccountID = s.Metadata[MetaAccountID]
		}
		e.Plan = c.planOf(s.Metadata, nil)
		e.CustomerID, e.SubscriptionID = idOf(s.Customer), idOf(s.Subscription)
		e.Mode, e.Status = s.Mode, s.PaymentStatus
	case EventSubscriptionUpdated, EventSubscriptionDeleted:
		var s subscription
		if err := json.Unmarshal(raw, &s); err != nil {
			return Event{}, domain.Invalid("invalid_payload", "body", "the subscription in the webhook does not decode: %v", err)
		}
		e.AccountID = s.Metadata[MetaAccountID]
		var prices []price
		for _, it := range s.Items.Data {
			prices = append(prices, it.Price)
		}
		e.Plan = c.planOf(s.Metadata, prices)
		e.CustomerID, e.SubscriptionID, e.Status = idOf(s.Customer), s.ID, s.Status
	}
	return e, nil
}

// checkoutSession and subscription hold the few fields read from webhook
// objects; decoding into them (not stripe-go's full types) keeps events of
// other API versions readable.
type checkoutSession struct {
	ClientReferenceID string            `json:"client_reference_id"`
	Customer          json.RawMessage   `json:"customer"`
	Subscription      json.RawMessage   `json:"subscription"`
	Metadata          map[string]string `json:"metadata"`
	Mode              string            `json:"mode"`
	PaymentStatus     string            `json:"payment_status"`
}

type subscription struct {
	ID       string            `json:"id"`
	Customer json.RawMessage   `json:"customer"`
	Status   string            `json:"status"`
	Metadata map[string]string `json:"metadata"`
	Items    struct {
		Data []struct {
			Price price `json:"price"`
		} `json:"data"`
	} `json:"items"`
}

type price struct {
	LookupKey  string `json:"lookup_key"`
	UnitAmount *int64 `json:"unit_amount"`
	Currency   string `json:"currency"`
	Recurring  *struct {
		Interval      string `json:"interval"`
		IntervalCount int64  `json:"interval_count"`
	} `json:"recurring"`
}

// idOf reads an expandable field: an id string, or an object with an id.
func idOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.ID
	}
	return ""
}

// planOf finds the plan: metadata first, then each price's lookup_key
// ("pro" or "arr_pro"), then a monthly price in the configured currency
// equal to a paid catalog plan's.
func (c *Client) planOf(meta map[string]string, prices []price) account.Plan {
	if p, err := account.ParsePlan(meta[MetaPlan]); err == nil && meta[MetaPlan] != "" {
		return p
	}
	for _, pr := range prices {
		if k := strings.TrimPrefix(strings.ToLower(pr.LookupKey), "arr_"); k != "" {
			if p, err := account.ParsePlan(k); err == nil {
				return p
			}
		}
	}
	for _, pr := range prices {
		if pr.UnitAmount == nil || !strings.EqualFold(pr.Currency, c.cfg.Currency) || pr.Recurring == nil ||
			pr.Recurring.Interval != "month" || pr.Recurring.IntervalCount > 1 {
			continue
		}
		for _, o := range account.Catalog() {
			if o.MonthlyPrice > 0 && int64(o.MonthlyPrice) == *pr.UnitAmount*10_000 {
				return o.Plan
			}
		}
	}
	return ""
}
