// Package billing is arr's side of Stripe: the gateway's billing endpoints
// (POST /v1/me/checkout, POST /v1/me/portal, the public POST
// /v1/checkout/session and the webhook POST /v1/stripe/webhook), the
// payment provider's line in the gateway's /healthz. The use case itself is
// commands/billing, the application's Billing (nil without
// STRIPE_API_KEY), which the account pages of all three services call for
// their "Upgrade" and "Manage billing" buttons too.
//
// Errors are domain errors the service's error responder maps: a plan that
// cannot be bought this way is 400, not an upgrade or an existing
// subscription 409, no Stripe customer yet (portal) 409, Stripe down or not
// configured 503.
//
// The webhook turns checkout.session.completed (and
// checkout.session.async_payment_succeeded) and customer.subscription
// updated/deleted events into the ChangePlan command with the Stripe event
// id as its Reference, so a replayed webhook changes nothing twice; it then
// waits for the identity read model so GET /v1/me shows the new plan at
// once.
package billingapi
