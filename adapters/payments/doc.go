// Package payments is arr's payment provider: Stripe, through stripe-go's
// per-client API (no global key or backend). It creates Checkout Sessions
// for plan upgrades and billing-portal sessions, checks that Stripe answers
// (for /healthz), and verifies and decodes webhooks into the few facts arr
// acts on (Event).
//
// Every call carries a timeout (Config.Timeout). Errors from Stripe become
// domain errors of kind domain.ErrUnavailable; a webhook with a bad or
// missing signature is domain.ErrInvalid. The API key and the webhook
// secret are never logged.
//
// Tests run against stripe-mock (see package stripemocktest).
package payments
