package httpx

import (
	"context"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/account"
)

// Mailer sends one plain-text e-mail. The account pages use it for sign-in
// links; cmd/arr passes an SMTP mailer, or a mailer that writes to the log
// when no SMTP_URL is set.
type Mailer interface {
	Send(ctx context.Context, to, subject, text string) error
}

// BillingAccount is what Billing needs to know about the signed-in account.
type BillingAccount struct {
	ID               uuid.UUID
	Email            string
	Plan             account.Plan
	StripeCustomerID string
}

// Billing starts the hosted payment pages the account pages redirect to:
// Checkout for an upgrade, the billing portal for everything else. Both
// return the URL to send the browser to.
type Billing interface {
	CheckoutURL(ctx context.Context, a BillingAccount, plan account.Plan, successURL, cancelURL string) (string, error)
	PortalURL(ctx context.Context, a BillingAccount, returnURL string) (string, error)
}
