package main

import (
	"context"
	"log/slog"

	"github.com/arr-dev/arr/commands/billing"
	"github.com/arr-dev/arr/projections/identity"

	"github.com/arr-dev/arr/adapters/payments"
	"github.com/arr-dev/arr/readapi/app"
	"github.com/arr-dev/arr/readapi/billingapi"
)

// openBilling wires Stripe for the billing endpoints and the account pages.
// Without STRIPE_API_KEY it returns nil: upgrades show as unavailable and
// the billing endpoints answer 503. No secret reaches the log.
func openBilling(cfg Config, a app.Application, log *slog.Logger) (*billing.Billing, error) {
	if cfg.StripeAPIKey == "" {
		log.Info("Stripe is not configured (STRIPE_API_KEY unset): checkout, the billing portal and the Stripe webhook answer 503")
		return nil, nil
	}
	pay, err := payments.New(payments.Config{
		APIKey: cfg.StripeAPIKey, APIBase: cfg.StripeAPIBase, WebhookSecret: cfg.StripeWebhookSecret, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	if cfg.StripeWebhookSecret == "" {
		log.Warn("STRIPE_WEBHOOK_SECRET is unset: Stripe webhooks are refused, so plans do not change after checkout")
	}
	core, err := billing.New(billing.Config{
		Payments: pay, Subscriber: billingapi.SubscriberOf(a.Queries.Identities), ChangePlan: a.Commands.ChangePlan,
		WaitFor: func(ctx context.Context, pos uint64) error { return a.WaitFor(ctx, identity.Name, pos) }, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	log.Info("Stripe billing on", "api_base", cfg.StripeAPIBase, "webhooks", cfg.StripeWebhookSecret != "", "admin_bypass", cfg.AdminKey != "")
	return core, nil
}
