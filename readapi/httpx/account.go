package httpx

import (
	"context"

	"github.com/google/uuid"

	"github.com/arr-dev/arr/domain/account"
)

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
