package billing

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/arr-dev/arr/projections/identity"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/arr-dev/arr/adapters/payments"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/httpx"
)

// Outcomes of a webhook, in its response body.
const (
	OutcomePlanChanged = "plan_changed" // a PlanChanged event was appended
	OutcomeUnchanged   = "unchanged"    // already applied (a replay) or nothing new
	OutcomeIgnored     = "ignored"      // not an event arr acts on; see reason
)

// webhook answers POST /v1/stripe/webhook. A bad or missing signature is 400
// and appends nothing; every verified event is 200 (Stripe stops
// retrying), except when applying it failed on our side (5xx, Stripe
// retries, and the event id makes the retry safe).
func (h *handlers) webhook(c *gin.Context) error {
	if h.b == nil || !h.b.cfg.Payments.WebhooksEnabled() {
		return &domain.Error{Kind: domain.ErrUnavailable, Code: "webhooks_not_configured", Message: "STRIPE_WEBHOOK_SECRET is unset"}
	}
	limit := h.b.cfg.MaxWebhookBytes
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, limit+1))
	if err != nil {
		return err
	}
	if int64(len(body)) > limit {
		return httpx.TooLarge(limit)
	}
	ev, err := h.b.cfg.Payments.ParseWebhook(body, c.GetHeader("Stripe-Signature"))
	if err != nil {
		return err
	}
	md := commands.Metadata{Actor: "stripe", CausationID: ev.ID, RequestID: c.GetString("request_id")}
	outcome, reason, err := h.b.Apply(c.Request.Context(), ev, md)
	if err != nil {
		h.b.cfg.Logger.Error("applying a Stripe webhook", "event_id", ev.ID, "type", ev.Type, "err", err)
		return err
	}
	if outcome == OutcomeIgnored {
		h.b.cfg.Logger.Info("Stripe webhook ignored", "event_id", ev.ID, "type", ev.Type, "reason", reason)
	}
	resp := gin.H{"received": true, "id": ev.ID, "type": ev.Type, "outcome": outcome}
	if reason != "" {
		resp["reason"] = reason
	}
	c.JSON(http.StatusOK, resp)
	return nil
}

// Apply turns one verified Stripe event into a plan change (ChangePlan with
// the event id as Reference) and waits for the identity read model to show
// it. It returns the outcome and, when ignored, why.
func (b *Billing) Apply(ctx context.Context, ev payments.Event, md commands.Metadata) (outcome, reason string, err error) {
	id, change, reason, err := b.planChangeFor(ctx, ev)
	if err != nil || reason != "" {
		return OutcomeIgnored, reason, err
	}
	pos, err := b.cfg.ChangePlan.Handle(ctx, commands.ChangePlan{AccountID: id, Change: change, Metadata: md})
	if domainNotFound(err) {
		return OutcomeIgnored, "no such account " + id.String(), nil
	}
	if err != nil {
		return "", "", err
	}
	if pos == 0 {
		return OutcomeUnchanged, "", nil
	}
	if b.cfg.WaitFor != nil {
		if werr := b.cfg.WaitFor(ctx, identity.Name, pos); werr != nil {
			// The change is recorded; only its visibility lags.
			b.cfg.Logger.Warn("plan changed but the identity read model has not caught up", "event_id", ev.ID, "err", werr)
		}
	}
	return OutcomePlanChanged, "", nil
}

// planChangeFor maps an event to the account and the change; a non-empty
// reason means the event is ignored.
func (b *Billing) planChangeFor(ctx context.Context, ev payments.Event) (uuid.UUID, account.PlanChange, string, error) {
	change := account.PlanChange{Source: "stripe", Reference: ev.ID, StripeCustomerID: ev.CustomerID, StripeSubscriptionID: ev.SubscriptionID}
	switch ev.Type {
	case payments.EventCheckoutCompleted, payments.EventCheckoutAsyncPaymentSucceed:
		if ev.Mode != "subscription" {
			return uuid.Nil, change, "not a subscription checkout", nil
		}
		if ev.Status == "unpaid" {
			return uuid.Nil, change, "payment not completed yet (awaiting checkout.session.async_payment_succeeded)", nil
		}
		id, err := uuid.Parse(ev.AccountID)
		if err != nil {
			return uuid.Nil, change, "no arr account id on the checkout session", nil
		}
		if ev.Plan == "" || ev.Plan == account.Free {
			return uuid.Nil, change, "no paid plan in the checkout session's metadata", nil
		}
		change.To = ev.Plan
		return id, change, "", nil
	case payments.EventSubscriptionUpdated, payments.EventSubscriptionDeleted:
		id, reason, err := b.subscriber(ctx, ev)
		if err != nil || reason != "" {
			return uuid.Nil, change, reason, err
		}
		switch {
		case ev.Type == payments.EventSubscriptionDeleted, ev.Status == "canceled", ev.Status == "incomplete_expired":
			change.To = account.Free
		case ev.Status == "active" || ev.Status == "trialing":
			if ev.Plan == "" {
				return uuid.Nil, change, "the subscription's price matches no plan", nil
			}
			change.To = ev.Plan
		default:
			return uuid.Nil, change, "subscription status " + ev.Status + " changes no plan", nil
		}
		return id, change, "", nil
	}
	return uuid.Nil, change, "event type not handled", nil
}

// subscriber finds the account of a subscription: the account id arr put in
// its metadata, else the account billed as its customer.
func (b *Billing) subscriber(ctx context.Context, ev payments.Event) (uuid.UUID, string, error) {
	if id, err := uuid.Parse(ev.AccountID); err == nil {
		return id, "", nil
	}
	if ev.CustomerID == "" {
		return uuid.Nil, "no customer on the subscription", nil
	}
	a, err := b.cfg.Identities.AccountByStripeCustomer(ctx, ev.CustomerID)
	if domainNotFound(err) {
		return uuid.Nil, "no account is billed as customer " + ev.CustomerID, nil
	}
	if err != nil {
		return uuid.Nil, "", err
	}
	return a.ID, "", nil
}

func domainNotFound(err error) bool { return errors.Is(err, domain.ErrNotFound) }
