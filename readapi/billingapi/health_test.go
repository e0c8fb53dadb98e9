package billingapi_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

func TestHealthReportsThePaymentProvider(t *testing.T) {
	tests := []struct {
		name       string
		stripe     func(t testing.TB) string
		wantStatus string
		wantStripe string
	}{
		{"stripe-mock answers", func(testing.TB) string { return "" }, "ok", "ok"},
		{"stripe down: degraded but serving", closedPort, "degraded", "down"},
		{"stripe not configured", func(testing.TB) string { return "none" }, "ok", "disabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.stripe(t))
			resp, err := http.Get(w.url + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Status          string `json:"status"`
				Service         string `json:"service"`
				Database        struct{ Status string }
				PaymentProvider struct {
					Status string `json:"status"`
					Error  string `json:"error"`
				} `json:"payment_provider"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || body.Status != tt.wantStatus || body.PaymentProvider.Status != tt.wantStripe {
				t.Fatalf("got %d %+v, want 200 status %s payment_provider %s", resp.StatusCode, body, tt.wantStatus, tt.wantStripe)
			}
			if body.Service != "gateway" || body.Database.Status != "ok" {
				t.Fatalf("the base report is missing: %+v", body)
			}
		})
	}
}
