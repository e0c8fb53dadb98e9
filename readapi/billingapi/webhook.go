package billingapi

import (
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/readapi/httpx"
)

// maxWebhookDrain is how much of an oversized webhook body is read and
// dropped before the 413.
const maxWebhookDrain = 1 << 20

// webhook answers POST /v1/stripe/webhook. A bad or missing signature is 400
// and appends nothing; every verified event is 200 (Stripe stops
// retrying), except when applying it failed on our side (5xx, Stripe
// retries, and the event id makes the retry safe).
func (h *handlers) webhook(c *gin.Context) error {
	if h.b == nil || !h.b.core().WebhooksEnabled() {
		return &domain.Error{Kind: domain.ErrUnavailable, Code: "webhooks_not_configured", Message: "STRIPE_WEBHOOK_SECRET is unset"}
	}
	limit := h.b.cfg.MaxWebhookBytes
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, limit+1))
	if err != nil {
		return err
	}
	if int64(len(body)) > limit {
		// The rest of a body not much over the limit is read and dropped
		// (bounded, and by the body deadline), so the sender reads the 413
		// instead of a connection reset mid-upload.
		_, _ = io.Copy(io.Discard, io.LimitReader(c.Request.Body, maxWebhookDrain))
		return httpx.TooLarge(limit)
	}
	r, err := h.b.core().Webhook(c.Request.Context(), body, c.GetHeader("Stripe-Signature"), httpx.CommandMetadata(c, "stripe"))
	if err != nil {
		return err
	}
	resp := gin.H{"received": true, "id": r.EventID, "type": r.Type, "outcome": r.Outcome}
	if r.Reason != "" {
		resp["reason"] = r.Reason
	}
	c.JSON(http.StatusOK, resp)
	return nil
}
