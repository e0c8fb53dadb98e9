// Package accountweb is the account page every service serves at /account:
// server-rendered HTML (html/template, embedded, no JavaScript, no external
// assets) for e-mail sign-up and sign-in by magic link, the session cookie,
// the service's API keys (minted with the secret shown once, revoked),
// usage of the last 30 days as an SVG bar chart, plan upgrades through
// Stripe Checkout, the billing portal and sign-out.
//
// Every state-changing form carries a CSRF token: before sign-in a random
// value double-submitted in a cookie, after sign-in the session's token
// (httpx.CSRFToken). Handlers read read models and call one command each.
package accountweb
