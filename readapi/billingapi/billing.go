package billingapi

import (
	"context"
	"errors"
	"log/slog"
	"net/url"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/commands/billing"
	"github.com/arr-dev/arr/readapi/app"
)

// Config is what the billing routes are built from.
type Config struct {
	// Billing starts sessions and applies webhooks (commands/billing): the
	// application's; nil when Stripe is not configured, and then every
	// route answers 503.
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

// Billing is the HTTP side of paid plans: the gateway's billing routes
// (Register) and the payment provider's health. Safe for concurrent use.
type Billing struct{ cfg Config }

// New returns a Billing.
func New(cfg Config) (*Billing, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Billing{cfg: cfg}, nil
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
