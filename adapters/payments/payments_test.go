package payments_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/arr-dev/arr/adapters/payments"
	"github.com/arr-dev/arr/adapters/payments/stripemocktest"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
)

const secret = "whsec_test_secret"

func newClient(t testing.TB, base, key string) *payments.Client {
	t.Helper()
	c, err := payments.New(payments.Config{APIKey: key, APIBase: base, WebhookSecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSessionsAgainstStripeMock(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs stripe-mock; runs without -short (scripts/test.sh)")
	}
	c := newClient(t, stripemocktest.Start(t), stripemocktest.APIKey)
	ctx := context.Background()
	acct := uuid.New()
	tests := []struct {
		name    string
		call    func() (payments.Session, error)
		wantErr error
	}{
		{"checkout with e-mail", func() (payments.Session, error) {
			return c.CreateCheckoutSession(ctx, payments.CheckoutRequest{AccountID: acct, Plan: account.Pro, Email: "a@example.com",
				SuccessURL: "http://127.0.0.1/account?checkout=success", CancelURL: "http://127.0.0.1/account?checkout=cancel"})
		}, nil},
		{"checkout with customer", func() (payments.Session, error) {
			return c.CreateCheckoutSession(ctx, payments.CheckoutRequest{AccountID: acct, Plan: account.Scale, CustomerID: "cus_123",
				SuccessURL: "http://127.0.0.1/account", CancelURL: "http://127.0.0.1/account"})
		}, nil},
		{"checkout of free", func() (payments.Session, error) {
			return c.CreateCheckoutSession(ctx, payments.CheckoutRequest{AccountID: acct, Plan: account.Free, Email: "a@example.com",
				SuccessURL: "http://127.0.0.1/account", CancelURL: "http://127.0.0.1/account"})
		}, domain.ErrInvalid},
		{"portal", func() (payments.Session, error) {
			return c.CreatePortalSession(ctx, "cus_123", "http://127.0.0.1/account")
		}, nil},
		{"portal without customer", func() (payments.Session, error) {
			return c.CreatePortalSession(ctx, "", "http://127.0.0.1/account")
		}, domain.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.call()
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.ID == "" || !strings.HasPrefix(s.URL, "http") {
				t.Fatalf("session %+v: want an id and a URL", s)
			}
		})
	}
}

func closedPort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func TestCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs stripe-mock; runs without -short (scripts/test.sh)")
	}
	mock := stripemocktest.Start(t)
	tests := []struct {
		name, base, key, want string
	}{
		{"stripe-mock answers", mock, stripemocktest.APIKey, "ok"},
		{"closed port", closedPort(t), stripemocktest.APIKey, "down"},
		{"no API key", mock, "", "disabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newClient(t, tt.base, tt.key).Check(context.Background())
			if st.State != tt.want {
				t.Fatalf("state %q (%s), want %q", st.State, st.Error, tt.want)
			}
			if tt.want == "down" && (st.Error == "" || strings.Contains(st.Error, stripemocktest.APIKey)) {
				t.Fatalf("down needs an error without the key, got %q", st.Error)
			}
		})
	}
}

func TestNotConfigured(t *testing.T) {
	c := newClient(t, "", "")
	_, err := c.CreatePortalSession(context.Background(), "cus_1", "http://x/account")
	if !errors.Is(err, domain.ErrUnavailable) || !errors.Is(err, payments.ErrNotConfigured) {
		t.Fatalf("err = %v, want ErrNotConfigured", err)
	}
}

// signed returns a webhook body and its Stripe-Signature header.
func signed(t testing.TB, body string, key string, at time.Time) ([]byte, string) {
	t.Helper()
	p := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: []byte(body), Secret: key, Timestamp: at})
	return p.Payload, p.Header
}

func event(id, typ, object string) string {
	return fmt.Sprintf(`{"id":%q,"object":"event","api_version":"2019-02-19","created":1700000000,"type":%q,"data":{"object":%s}}`, id, typ, object)
}

func TestParseWebhook(t *testing.T) {
	c := newClient(t, "", "")
	acct := uuid.NewString()
	now := time.Now()
	tests := []struct {
		name    string
		body    string
		key     string
		at      time.Time
		header  *string
		want    payments.Event
		wantErr error
	}{
		{name: "checkout completed", key: secret, at: now,
			body: event("evt_1", payments.EventCheckoutCompleted, fmt.Sprintf(`{"id":"cs_1","object":"checkout.session","mode":"subscription","payment_status":"paid","client_reference_id":%q,"customer":"cus_1","subscription":"sub_1","metadata":{"plan":"pro","account_id":%q}}`, acct, acct)),
			want: payments.Event{ID: "evt_1", Type: payments.EventCheckoutCompleted, AccountID: acct, Plan: account.Pro, CustomerID: "cus_1", SubscriptionID: "sub_1", Mode: "subscription", Status: "paid"}},
		{name: "subscription updated, plan from the price amount", key: secret, at: now,
			body: event("evt_2", payments.EventSubscriptionUpdated, `{"id":"sub_1","object":"subscription","status":"active","customer":{"id":"cus_1"},"metadata":{},"items":{"data":[{"price":{"unit_amount":49900,"currency":"usd","recurring":{"interval":"month","interval_count":1}}}]}}`),
			want: payments.Event{ID: "evt_2", Type: payments.EventSubscriptionUpdated, Plan: account.Scale, CustomerID: "cus_1", SubscriptionID: "sub_1", Status: "active"}},
		{name: "subscription deleted, plan from the lookup key", key: secret, at: now,
			body: event("evt_3", payments.EventSubscriptionDeleted, `{"id":"sub_2","object":"subscription","status":"canceled","customer":"cus_2","metadata":{"account_id":"x"},"items":{"data":[{"price":{"lookup_key":"arr_starter","unit_amount":1,"currency":"usd"}}]}}`),
			want: payments.Event{ID: "evt_3", Type: payments.EventSubscriptionDeleted, AccountID: "x", Plan: account.Starter, CustomerID: "cus_2", SubscriptionID: "sub_2", Status: "canceled"}},
		{name: "other type", key: secret, at: now, body: event("evt_4", "invoice.paid", `{"id":"in_1"}`),
			want: payments.Event{ID: "evt_4", Type: "invoice.paid"}},
		{name: "wrong secret", key: "whsec_other", at: now, body: event("evt_5", "invoice.paid", `{}`), wantErr: payments.ErrBadSignature},
		{name: "too old", key: secret, at: now.Add(-time.Hour), body: event("evt_6", "invoice.paid", `{}`), wantErr: payments.ErrBadSignature},
		{name: "no signature", key: secret, at: now, header: new(string), body: event("evt_7", "invoice.paid", `{}`), wantErr: payments.ErrBadSignature},
		{name: "malformed signature", key: secret, at: now, header: ptr("t=abc,v1=zz"), body: event("evt_8", "invoice.paid", `{}`), wantErr: payments.ErrBadSignature},
		{name: "signed non-event", key: secret, at: now, body: `{"object":"balance"}`, wantErr: domain.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, header := signed(t, tt.body, tt.key, tt.at)
			if tt.header != nil {
				header = *tt.header
			}
			got, err := c.ParseWebhook(body, header)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Created = time.Time{}
			if got != tt.want {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestWebhooksNeedTheSecret(t *testing.T) {
	c, err := payments.New(payments.Config{})
	if err != nil {
		t.Fatal(err)
	}
	body, header := signed(t, event("evt_1", "invoice.paid", `{}`), "", time.Now())
	if _, err := c.ParseWebhook(body, header); !errors.Is(err, payments.ErrBadSignature) {
		t.Fatalf("without a configured secret: err = %v, want ErrBadSignature", err)
	}
}

func ptr(s string) *string { return &s }
