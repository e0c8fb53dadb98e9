package billingapi

import (
	"context"
	"net/http"

	"github.com/arr-dev/arr/readapi/httpx"
)

// HealthReport is the gateway's /healthz body: the shared report plus the
// payment provider.
type HealthReport struct {
	httpx.HealthReport
	// PaymentProvider is Stripe: "ok", "down" or "disabled" (not configured).
	PaymentProvider httpx.Check `json:"payment_provider"`
}

// Health is the gateway's health: d.BaseHealth plus the payment provider.
// Stripe being down makes the status "degraded" but keeps 200 (the gateway
// still serves completions); only the database makes it 503.
func Health(ctx context.Context, d httpx.Deps, service string) (int, any) {
	code, base := d.BaseHealth(ctx, service)
	st := d.App.Billing.PaymentStatus(ctx)
	r := HealthReport{HealthReport: base, PaymentProvider: httpx.Check{
		Status: st.State, LatencyMS: float64(st.Latency.Microseconds()) / 1000, Error: st.Error,
	}}
	if st.State == "down" && code == http.StatusOK {
		r.Status = "degraded"
	}
	return code, r
}
