package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/payments"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
)

// Outcomes of a webhook event.
const (
	OutcomePlanChanged = "plan_changed" // a PlanChanged event was appended
	OutcomeUnchanged   = "unchanged"    // already applied (a replay) or nothing new
	OutcomeIgnored     = "ignored"      // not an event arr acts on; see reason
)

// Account is what Billing needs to know about an account.
type Account struct {
	ID               uuid.UUID
	Email            string
	Plan             account.Plan
	StripeCustomerID string
}

// Config is what a Billing is built from.
type Config struct {
	// Payments is the Stripe client.
	Payments *payments.Client
	// Subscriber finds the account billed as a Stripe customer
	// (domain.ErrNotFound when none is).
	Subscriber func(ctx context.Context, customerID string) (uuid.UUID, error)
	// ChangePlan applies what webhooks report.
	ChangePlan *commands.ChangePlanHandler
	// WaitFor is read-your-writes on the identity read model; nil waits for
	// nothing.
	WaitFor func(ctx context.Context, pos uint64) error
	// Logger; default discard.
	Logger *slog.Logger
	// HealthTTL is how long a payment-provider check is reused, so polling
	// /healthz does not hammer Stripe. Default 15s.
	HealthTTL time.Duration
}

// Validate fills in defaults and reports every missing dependency at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Payments == nil {
		errs = append(errs, errors.New("billing: Payments is required"))
	}
	if c.Subscriber == nil {
		errs = append(errs, errors.New("billing: Subscriber is required"))
	}
	if c.ChangePlan == nil {
		errs = append(errs, errors.New("billing: ChangePlan is required"))
	}
	if c.HealthTTL < 0 {
		errs = append(errs, fmt.Errorf("billing: HealthTTL is negative (%s)", c.HealthTTL))
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.HealthTTL == 0 {
		c.HealthTTL = 15 * time.Second
	}
	return errors.Join(errs...)
}

// Billing starts Checkout and billing-portal sessions under the plan
// rules and turns Stripe's verified webhook events into plan changes.
// Safe for concurrent use.
type Billing struct {
	cfg Config

	healthMu sync.Mutex
	health   payments.Status
	checked  time.Time
}

// New returns a Billing.
func New(cfg Config) (*Billing, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Billing{cfg: cfg}, nil
}

// Portal creates a Stripe billing-portal session for the account's
// customer; returnURL (absolute) is the portal's way back. An account with
// no Stripe customer yet (it never checked out) is a 409 conflict.
func (b *Billing) Portal(ctx context.Context, a Account, returnURL string) (payments.Session, error) {
	if err := b.Enabled(); err != nil {
		return payments.Session{}, err
	}
	if a.StripeCustomerID == "" {
		return payments.Session{}, domain.Conflict("no_stripe_customer",
			"this account has no Stripe customer yet: the billing portal opens after a first upgrade through checkout (POST /v1/me/checkout)")
	}
	if err := checkURL("return_url", returnURL); err != nil {
		return payments.Session{}, err
	}
	return b.cfg.Payments.CreatePortalSession(ctx, a.StripeCustomerID, returnURL)
}

// Checkout starts a Stripe Checkout that subscribes the account to plan.
// The plan must be self-serve (unless bypass, the operator's admin key),
// paid and above the account's plan, and an account that already pays
// through Stripe changes its subscription in the portal instead (409).
// successURL and cancelURL are absolute http(s) URLs. The plan change
// itself arrives later by webhook.
func (b *Billing) Checkout(ctx context.Context, a Account, plan account.Plan, bypass bool, successURL, cancelURL string) (payments.Session, error) {
	if err := b.Enabled(); err != nil {
		return payments.Session{}, err
	}
	offer := plan.Offer()
	switch {
	case plan.Rank() < 0:
		return payments.Session{}, domain.Invalid("invalid_plan", "plan", "unknown plan %q", plan)
	case offer.MonthlyPrice <= 0:
		return payments.Session{}, domain.Invalid("plan_not_billable", "plan",
			"%s costs nothing and needs no checkout; to leave a paid plan, cancel in the billing portal", offer.Title)
	case bypass:
	case !offer.SelfServe:
		return payments.Session{}, domain.Invalid("plan_not_self_serve", "plan",
			"%s is not sold through checkout; contact sales", offer.Title)
	case plan.Rank() <= a.Plan.Rank():
		return payments.Session{}, domain.Conflict("not_an_upgrade",
			"the account is on %s already; checkout is for moving to a dearer plan", a.Plan.Offer().Title)
	case a.Plan != account.Free && a.StripeCustomerID != "":
		return payments.Session{}, domain.Conflict("subscription_exists",
			"the account already pays for %s through Stripe; change the subscription in the billing portal (POST /v1/me/portal)", a.Plan.Offer().Title)
	}
	if err := checkURL("success_url", successURL); err != nil {
		return payments.Session{}, err
	}
	if err := checkURL("cancel_url", cancelURL); err != nil {
		return payments.Session{}, err
	}
	return b.cfg.Payments.CreateCheckoutSession(ctx, payments.CheckoutRequest{
		AccountID: a.ID, Plan: plan, CustomerID: a.StripeCustomerID, Email: a.Email,
		SuccessURL: successURL, CancelURL: cancelURL,
	})
}

// Enabled is nil when the Stripe API is configured, else
// payments.ErrNotConfigured (503).
func (b *Billing) Enabled() error {
	if b == nil || !b.cfg.Payments.APIEnabled() {
		return payments.ErrNotConfigured
	}
	return nil
}

func checkURL(field, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return domain.Invalid("invalid_url", field, "%s must be an absolute http(s) URL", field)
	}
	return nil
}

// PaymentStatus checks the payment provider, reusing a check younger than
// HealthTTL. A nil Billing is "disabled".
func (b *Billing) PaymentStatus(ctx context.Context) payments.Status {
	if b == nil {
		return payments.Status{State: "disabled"}
	}
	b.healthMu.Lock()
	defer b.healthMu.Unlock()
	if !b.checked.IsZero() && time.Since(b.checked) < b.cfg.HealthTTL {
		return b.health
	}
	b.health, b.checked = b.cfg.Payments.Check(ctx), time.Now()
	if b.health.State == "down" {
		b.cfg.Logger.Warn("payment provider check failed", "error", b.health.Error)
	}
	return b.health
}

// String is for logs: it never prints the admin key.
func (b *Billing) String() string {
	return fmt.Sprintf("billing (stripe api %v)", b.cfg.Payments.APIEnabled())
}

// WebhooksEnabled reports whether webhooks can be verified
// (STRIPE_WEBHOOK_SECRET is set).
func (b *Billing) WebhooksEnabled() bool { return b != nil && b.cfg.Payments.WebhooksEnabled() }

// WebhookResult is what one verified webhook event came to.
type WebhookResult struct {
	EventID, Type string
	// Outcome is one of the Outcome constants; Reason says why an event
	// was ignored.
	Outcome, Reason string
}

// Webhook verifies a Stripe webhook body against its Stripe-Signature
// header (a bad or missing signature is invalid input and changes
// nothing) and applies the event it carries (Apply). md comes from the
// webhook request (commands.NewMetadata, actor "stripe"); its CausationID
// is set to the Stripe event's id.
func (b *Billing) Webhook(ctx context.Context, body []byte, signature string, md commands.Metadata) (WebhookResult, error) {
	ev, err := b.cfg.Payments.ParseWebhook(body, signature)
	if err != nil {
		return WebhookResult{}, err
	}
	md.CausationID = ev.ID
	r := WebhookResult{EventID: ev.ID, Type: ev.Type}
	r.Outcome, r.Reason, err = b.Apply(ctx, ev, md)
	if err != nil {
		b.cfg.Logger.Error("applying a Stripe webhook", "event_id", ev.ID, "type", ev.Type, "err", err)
		return r, err
	}
	if r.Outcome == OutcomeIgnored {
		b.cfg.Logger.Info("Stripe webhook ignored", "event_id", ev.ID, "type", ev.Type, "reason", r.Reason)
	}
	return r, nil
}

// Apply turns one verified Stripe event into a plan change (ChangePlan with
// the event id as Reference) and waits for the identity read model to show
// it. It returns the outcome and, when ignored, why.
func (b *Billing) Apply(ctx context.Context, ev payments.Event, md commands.Metadata) (outcome, reason string, err error) {
	id, change, reason, err := b.planChangeFor(ctx, ev)
	if err != nil || reason != "" {
		return OutcomeIgnored, reason, err
	}
	pos, err := b.cfg.ChangePlan.Handle(ctx, commands.ChangePlan{AccountID: id, Change: change, Metadata: md})
	if domainNotFound(err) {
		return OutcomeIgnored, "no such account " + id.String(), nil
	}
	if err != nil {
		return "", "", err
	}
	if pos == 0 {
		return OutcomeUnchanged, "", nil
	}
	if b.cfg.WaitFor != nil {
		if werr := b.cfg.WaitFor(ctx, pos); werr != nil {
			// The change is recorded; only its visibility lags.
			b.cfg.Logger.Warn("plan changed but the identity read model has not caught up", "event_id", ev.ID, "err", werr)
		}
	}
	return OutcomePlanChanged, "", nil
}

// planChangeFor maps an event to the account and the change; a non-empty
// reason means the event is ignored.
func (b *Billing) planChangeFor(ctx context.Context, ev payments.Event) (uuid.UUID, account.PlanChange, string, error) {
	change := account.PlanChange{Source: "stripe", Reference: ev.ID, StripeCustomerID: ev.CustomerID, StripeSubscriptionID: ev.SubscriptionID}
	switch ev.Type {
	case payments.EventCheckoutCompleted, payments.EventCheckoutAsyncPaymentSucceed:
		if ev.Mode != "subscription" {
			return uuid.Nil, change, "not a subscription checkout", nil
		}
		if ev.Status == "unpaid" {
			return uuid.Nil, change, "payment not completed yet (awaiting checkout.session.async_payment_succeeded)", nil
		}
		id, err := uuid.Parse(ev.AccountID)
		if err != nil {
			return uuid.Nil, change, "no arr account id on the checkout session", nil
		}
		if ev.Plan == "" || ev.Plan == account.Free {
			return uuid.Nil, change, "no paid plan in the checkout session's metadata", nil
		}
		change.To = ev.Plan
		return id, change, "", nil
	case payments.EventSubscriptionUpdated, payments.EventSubscriptionDeleted:
		id, reason, err := b.subscriber(ctx, ev)
		if err != nil || reason != "" {
			return uuid.Nil, change, reason, err
		}
		switch {
		case ev.Type == payments.EventSubscriptionDeleted, ev.Status == "canceled", ev.Status == "incomplete_expired":
			change.To = account.Free
		case ev.Status == "active" || ev.Status == "trialing":
			if ev.Plan == "" {
				return uuid.Nil, change, "the subscription's price matches no plan", nil
			}
			change.To = ev.Plan
		default:
			return uuid.Nil, change, "subscription status " + ev.Status + " changes no plan", nil
		}
		return id, change, "", nil
	}
	return uuid.Nil, change, "event type not handled", nil
}

// subscriber finds the account of a subscription: the account id arr put in
// its metadata, else the account billed as its customer.
func (b *Billing) subscriber(ctx context.Context, ev payments.Event) (uuid.UUID, string, error) {
	if id, err := uuid.Parse(ev.AccountID); err == nil {
		return id, "", nil
	}
	if ev.CustomerID == "" {
		return uuid.Nil, "no customer on the subscription", nil
	}
	a, err := b.cfg.Subscriber(ctx, ev.CustomerID)
	if domainNotFound(err) {
		return uuid.Nil, "no account is billed as customer " + ev.CustomerID, nil
	}
	if err != nil {
		return uuid.Nil, "", err
	}
	return a, "", nil
}

func domainNotFound(err error) bool { return errors.Is(err, domain.ErrNotFound) }
