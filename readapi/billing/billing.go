package billing

import (
	"context"
	"errors"
	"log/slog"
	"net/url"

	"github.com/arr-dev/arr/commands/billing"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/httpx"
	"github.com/google/uuid"
)

// Config is what the billing routes are built from.
type Config struct {
	// Billing starts sessions and applies webhooks (commands/billing).
	Billing *billing.Billing
	// Identities finds the public checkout's account by e-mail.
	Identities app.Identities
	// AdminKey lets an operator bypass the plan checks of the public
	// checkout (header X-Admin-Key); empty turns the bypass off. Never logged.
	AdminKey string
	// Logger; default discard.
	Logger *slog.Logger
	// MaxWebhookBytes caps a webhook body. Default 256 KiB.
	MaxWebhookBytes int64
}

// Validate fills in defaults and reports every missing dependency at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Billing == nil {
		errs = append(errs, errors.New("billing: Billing is required"))
	}
	if c.Identities == nil {
		errs = append(errs, errors.New("billing: Identities is required"))
	}
	if c.MaxWebhookBytes < 0 {
		errs = append(errs, errors.New("billing: MaxWebhookBytes is negative"))
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxWebhookBytes == 0 {
		c.MaxWebhookBytes = 256 << 10
	}
	return errors.Join(errs...)
}

// Billing is the HTTP side of paid plans: the account pages' redirects
// (httpx.Billing) and the gateway's billing routes (Register). Safe for
// concurrent use.
type Billing struct{ cfg Config }

var _ httpx.Billing = (*Billing)(nil)

// New returns a Billing.
func New(cfg Config) (*Billing, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Billing{cfg: cfg}, nil
}

// CheckoutURL starts a Stripe Checkout (billing.Billing.Checkout) and
// returns the Checkout page's URL, to redirect the browser to (303).
func (b *Billing) CheckoutURL(ctx context.Context, a httpx.BillingAccount, plan account.Plan, successURL, cancelURL string) (string, error) {
	s, err := b.cfg.Billing.Checkout(ctx, billing.Account(a), plan, false, successURL, cancelURL)
	return s.URL, err
}

// PortalURL creates a billing-portal session (billing.Billing.Portal) and
// returns its URL.
func (b *Billing) PortalURL(ctx context.Context, a httpx.BillingAccount, returnURL string) (string, error) {
	s, err := b.cfg.Billing.Portal(ctx, billing.Account(a), returnURL)
	return s.URL, err
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

// SubscriberOf is billing.Config.Subscriber over the identity read model:
// the account billed as a Stripe customer.
func SubscriberOf(ids app.Identities) func(ctx context.Context, customerID string) (uuid.UUID, error) {
	return func(ctx context.Context, customerID string) (uuid.UUID, error) {
		a, err := ids.AccountByStripeCustomer(ctx, customerID)
		return a.ID, err
	}
}

// core is the write side; nil when billing is not configured (its
// methods then answer payments.ErrNotConfigured).
func (b *Billing) core() *billing.Billing {
	if b == nil {
		return nil
	}
	return b.cfg.Billing
}
