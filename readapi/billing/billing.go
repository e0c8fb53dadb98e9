package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/arr-dev/arr/adapters/payments"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/httpx"
)

// Config is what a Billing is built from.
type Config struct {
	// Payments is the Stripe client.
	Payments *payments.Client
	// Identities finds accounts by e-mail and by Stripe customer.
	Identities app.Identities
	// ChangePlan applies what webhooks report.
	ChangePlan *commands.ChangePlanHandler
	// WaitFor is read-your-writes (httpx.Deps.WaitFor); nil waits for nothing.
	WaitFor func(ctx context.Context, projection string, pos uint64) error
	// AdminKey lets an operator bypass the plan checks of the public
	// checkout (header X-Admin-Key); empty turns the bypass off. Never logged.
	AdminKey string
	// Logger; default discard.
	Logger *slog.Logger
	// MaxWebhookBytes caps a webhook body. Default 256 KiB.
	MaxWebhookBytes int64
	// HealthTTL is how long a payment-provider check is reused by /healthz,
	// so polling /healthz does not hammer Stripe. Default 15s.
	HealthTTL time.Duration
}

// Validate fills in defaults and refuses missing dependencies.
func (c *Config) Validate() error {
	if c.Payments == nil || c.Identities == nil || c.ChangePlan == nil {
		return errors.New("billing: Payments, Identities and ChangePlan are required")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxWebhookBytes <= 0 {
		c.MaxWebhookBytes = 256 << 10
	}
	if c.HealthTTL <= 0 {
		c.HealthTTL = 15 * time.Second
	}
	return nil
}

// Billing starts Checkout and billing-portal sessions and applies Stripe's
// webhooks. It implements httpx.Billing. Safe for concurrent use.
type Billing struct {
	cfg Config

	healthMu sync.Mutex
	health   payments.Status
	checked  time.Time
}

var _ httpx.Billing = (*Billing)(nil)

// New returns a Billing.
func New(cfg Config) (*Billing, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Billing{cfg: cfg}, nil
}

// CheckoutURL starts a Stripe Checkout that subscribes the account to plan
// and returns the Checkout page's URL, to redirect the browser to (303).
// successURL and cancelURL (absolute http(s) URLs, usually the account
// page) are where Stripe sends the browser back. The plan must be
// self-serve, paid and above the account's plan, and an account that
// already pays through Stripe changes its subscription in the portal
// instead (409). The plan change itself arrives later by webhook.
func (b *Billing) CheckoutURL(ctx context.Context, a httpx.BillingAccount, plan account.Plan, successURL, cancelURL string) (string, error) {
	s, err := b.checkout(ctx, a, plan, false, successURL, cancelURL)
	return s.URL, err
}

// PortalURL creates a Stripe billing-portal session for the account's
// customer and returns its URL; returnURL (absolute) is the portal's way
// back. An account with no Stripe customer yet (it never checked out) is a
// 409 conflict.
func (b *Billing) PortalURL(ctx context.Context, a httpx.BillingAccount, returnURL string) (string, error) {
	s, err := b.portal(ctx, a, returnURL)
	return s.URL, err
}

func (b *Billing) portal(ctx context.Context, a httpx.BillingAccount, returnURL string) (payments.Session, error) {
	if err := b.enabled(); err != nil {
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

// checkout applies the plan rules (unless bypass) and creates the session.
func (b *Billing) checkout(ctx context.Context, a httpx.BillingAccount, plan account.Plan, bypass bool, successURL, cancelURL string) (payments.Session, error) {
	if err := b.enabled(); err != nil {
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

func (b *Billing) enabled() error {
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

// withQuery returns u with key=value added to its query.
func withQuery(u, key, value string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := p.Query()
	q.Set(key, value)
	p.RawQuery = q.Encode()
	return p.String()
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
