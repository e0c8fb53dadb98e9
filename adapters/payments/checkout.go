package payments

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/stripe/stripe-go/v85"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
)

// Metadata keys arr puts on Checkout Sessions and their subscriptions, and
// reads back from webhooks.
const (
	MetaAccountID = "account_id"
	MetaPlan      = "plan"
)

// CheckoutRequest asks for a Checkout Session that subscribes an account to
// a plan at the catalog's monthly price.
type CheckoutRequest struct {
	AccountID uuid.UUID
	Plan      account.Plan
	// CustomerID is the account's Stripe customer, if it has one; else
	// Email prefills the Checkout page and Stripe creates the customer.
	CustomerID string
	Email      string
	// SuccessURL and CancelURL are where Stripe sends the browser back.
	SuccessURL string
	CancelURL  string
}

// Session is a hosted Stripe page to send the browser to.
type Session struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// CreateCheckoutSession creates a subscription-mode Checkout Session with
// one line item priced inline from the plan catalog (monthly), named
// "arr <Plan>". client_reference_id is the account id; the session and the
// subscription carry metadata plan and account_id, so webhooks can be
// mapped back without a lookup.
func (c *Client) CreateCheckoutSession(ctx context.Context, r CheckoutRequest) (Session, error) {
	offer := r.Plan.Offer()
	if offer.Plan != r.Plan || offer.MonthlyPrice <= 0 {
		return Session{}, domain.Invalid("plan_not_billable", "plan", "plan %q has no monthly price to check out", r.Plan)
	}
	if offer.MonthlyPrice%10_000 != 0 {
		return Session{}, fmt.Errorf("payments: the price of %s is not a whole number of cents", r.Plan)
	}
	meta := map[string]string{MetaPlan: string(r.Plan), MetaAccountID: r.AccountID.String()}
	p := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModeSubscription)),
		ClientReferenceID: stripe.String(r.AccountID.String()),
		SuccessURL:        stripe.String(r.SuccessURL),
		CancelURL:         stripe.String(r.CancelURL),
		Metadata:          meta,
		SubscriptionData:  &stripe.CheckoutSessionCreateSubscriptionDataParams{Metadata: meta},
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(c.cfg.Currency),
				UnitAmount:  stripe.Int64(int64(offer.MonthlyPrice) / 10_000),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("arr " + offer.Title)},
				Recurring:   &stripe.CheckoutSessionCreateLineItemPriceDataRecurringParams{Interval: stripe.String(string(stripe.PriceRecurringIntervalMonth))},
			},
		}},
	}
	if r.CustomerID != "" {
		p.Customer = stripe.String(r.CustomerID)
	} else if r.Email != "" {
		p.CustomerEmail = stripe.String(r.Email)
	}
	var s *stripe.CheckoutSession
	err := c.call(ctx, "creating a checkout session", func(ctx context.Context) (err error) {
		s, err = c.api.V1CheckoutSessions.Create(ctx, p)
		return err
	})
	if err != nil {
		return Session{}, err
	}
	return Session{ID: s.ID, URL: s.URL}, nil
}

// CreatePortalSession creates a billing-portal session for a customer;
// returnURL is where the portal's "back" link goes.
func (c *Client) CreatePortalSession(ctx context.Context, customerID, returnURL string) (Session, error) {
	if customerID == "" {
		return Session{}, domain.Conflict("no_stripe_customer", "this account has no Stripe customer yet")
	}
	p := &stripe.BillingPortalSessionCreateParams{Customer: stripe.String(customerID), ReturnURL: stripe.String(returnURL)}
	var s *stripe.BillingPortalSession
	err := c.call(ctx, "creating a billing portal session", func(ctx context.Context) (err error) {
		s, err = c.api.V1BillingPortalSessions.Create(ctx, p)
		return err
	})
	if err != nil {
		return Session{}, err
	}
	return Session{ID: s.ID, URL: s.URL}, nil
}
