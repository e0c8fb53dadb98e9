package payments

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"
)

// DefaultAPIBase is Stripe's API.
const DefaultAPIBase = "https://api.stripe.com"

// Config configures a Client. The zero value plus an APIKey works.
type Config struct {
	// APIKey is the Stripe secret key (sk_…). Empty disables the API calls:
	// they fail with ErrNotConfigured, and Check reports "disabled".
	APIKey string
	// APIBase is the API's base URL; tests point it at stripe-mock.
	// Default DefaultAPIBase.
	APIBase string
	// WebhookSecret is the signing secret of the webhook endpoint (whsec_…).
	// Empty makes every webhook fail verification.
	WebhookSecret string
	// Timeout bounds every API call. Default 10s.
	Timeout time.Duration
	// HealthTimeout bounds the health check. Default 2s.
	HealthTimeout time.Duration
	// WebhookTolerance is how old a webhook's signature timestamp may be.
	// Default 5 minutes (Stripe's).
	WebhookTolerance time.Duration
	// Currency of the prices sent to Checkout. Default "usd".
	Currency string
	// HTTPClient carries the calls; default a client with Timeout.
	HTTPClient *http.Client
	// Logger receives stripe-go's log lines (never a key). Default discard.
	Logger *slog.Logger
}

// Validate fills in defaults and checks the values.
func (c *Config) Validate() error {
	if c.APIBase == "" {
		c.APIBase = DefaultAPIBase
	}
	u, err := url.Parse(c.APIBase)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("payments: STRIPE_API_BASE must be an http(s) URL, not %q", c.APIBase)
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.HealthTimeout <= 0 {
		c.HealthTimeout = 2 * time.Second
	}
	if c.WebhookTolerance <= 0 {
		c.WebhookTolerance = 5 * time.Minute
	}
	if c.Currency == "" {
		c.Currency = "usd"
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: c.Timeout}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
