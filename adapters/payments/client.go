package payments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/stripe/stripe-go/v85"

	"github.com/arr-dev/arr/domain"
)

// Client talks to Stripe. Safe for concurrent use.
type Client struct {
	cfg    Config
	api    *stripe.Client // nil without an API key
	health *stripe.Client // the same, without retries
}

// ErrNotConfigured is the kind-ErrUnavailable error of an API call made
// without STRIPE_API_KEY.
var ErrNotConfigured = &domain.Error{Kind: domain.ErrUnavailable, Code: "payments_not_configured",
	Message: "payments are not configured on this server (STRIPE_API_KEY is unset)"}

// New returns a client. Without an API key it still verifies webhooks (if
// it has the secret) but refuses API calls with ErrNotConfigured.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg}
	if cfg.APIKey != "" {
		c.api = c.newStripe(1)
		c.health = c.newStripe(0)
	}
	return c, nil
}

func (c *Client) newStripe(retries int64) *stripe.Client {
	bc := &stripe.BackendConfig{
		HTTPClient:        c.cfg.HTTPClient,
		URL:               stripe.String(c.cfg.APIBase),
		MaxNetworkRetries: stripe.Int64(retries),
		LeveledLogger:     slogLogger{c.cfg.Logger},
		EnableTelemetry:   stripe.Bool(false),
	}
	return stripe.NewClient(c.cfg.APIKey, stripe.WithBackends(stripe.NewBackendsWithConfig(bc)))
}

// APIEnabled reports whether API calls (Checkout, portal, health) can be
// made: an API key is configured.
func (c *Client) APIEnabled() bool { return c != nil && c.api != nil }

// WebhooksEnabled reports whether webhooks can be verified: a signing
// secret is configured.
func (c *Client) WebhooksEnabled() bool { return c != nil && c.cfg.WebhookSecret != "" }

// call runs one API call under the configured timeout and translates its
// error.
func (c *Client) call(ctx context.Context, what string, f func(ctx context.Context) error) error {
	if !c.APIEnabled() {
		return ErrNotConfigured
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	return translate(what, f(ctx))
}

// translate maps a stripe-go error to a domain error of kind
// ErrUnavailable, keeping Stripe's message and request id for the logs.
func translate(what string, err error) error {
	if err == nil {
		return nil
	}
	var se *stripe.Error
	if errors.As(err, &se) {
		return fmt.Errorf("stripe: %s: %s (status %d, type %s, code %s, request %s): %w",
			what, se.Msg, se.HTTPStatusCode, se.Type, se.Code, se.RequestID, domain.ErrUnavailable)
	}
	return fmt.Errorf("stripe: %s: %v: %w", what, err, domain.ErrUnavailable)
}

// slogLogger adapts slog to stripe-go's leveled logger. stripe-go's own
// lines carry paths, statuses and request ids, never the key.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Debugf(format string, v ...any) {
	s.l.Debug(fmt.Sprintf(format, v...), "component", "stripe")
}
func (s slogLogger) Infof(format string, v ...any) {
	s.l.Debug(fmt.Sprintf(format, v...), "component", "stripe")
}
func (s slogLogger) Warnf(format string, v ...any) {
	s.l.Warn(fmt.Sprintf(format, v...), "component", "stripe")
}
func (s slogLogger) Errorf(format string, v ...any) {
	s.l.Warn(fmt.Sprintf(format, v...), "component", "stripe")
}

// Status is the payment provider's state in a health report.
type Status struct {
	// State is "ok", "down" or "disabled" (no API key configured).
	State   string
	Latency time.Duration
	// Error says what failed, without secrets.
	Error string
}

// Check makes one cheap authenticated call (GET /v1/balance) to see that
// Stripe answers and accepts the key.
func (c *Client) Check(ctx context.Context) Status {
	if !c.APIEnabled() {
		return Status{State: "disabled"}
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.HealthTimeout)
	defer cancel()
	start := time.Now()
	_, err := c.health.V1Balance.Retrieve(ctx, nil)
	st := Status{State: "ok", Latency: time.Since(start)}
	if err != nil {
		st.State, st.Error = "down", "payment provider unreachable or refusing the key"
		var se *stripe.Error
		if errors.As(err, &se) && se.HTTPStatusCode > 0 {
			st.Error = fmt.Sprintf("payment provider answered %d (%s)", se.HTTPStatusCode, se.Type)
		}
	}
	return st
}
