package billingapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/payments"
	"github.com/arr-dev/arr/commands/billing"
	"github.com/arr-dev/arr/domain"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/readapi/httpx"
)

func TestMeEndpoints(t *testing.T) {
	w := newWorld(t, "")
	w.createAccount("free@example.com", account.Free)
	freeSession := w.signIn("free@example.com")
	payer := w.createAccount("payer@example.com", account.Free)
	paid := checkoutCompleted("evt_paid", payer.AccountID.String(), account.Pro, "cus_payer")
	if code, body := post(t, w.url+"/v1/stripe/webhook", paid, map[string]string{"Stripe-Signature": sign(paid, webhookSecret)}); code != 200 {
		t.Fatalf("webhook: %d %v", code, body)
	}
	payerSession := w.signIn("payer@example.com")

	auth := func(session string) map[string]string {
		return map[string]string{"Cookie": httpx.SessionCookie + "=" + session, httpx.CSRFHeader: csrf(session)}
	}
	noCSRF := map[string]string{"Cookie": httpx.SessionCookie + "=" + freeSession}
	tests := []struct {
		name     string
		path     string
		body     any
		headers  map[string]string
		want     int
		wantCode string
	}{
		{"checkout without a session", "/v1/me/checkout", map[string]string{"plan": "pro"}, nil, 401, "no_session"},
		{"checkout with an unknown session", "/v1/me/checkout", map[string]string{"plan": "pro"}, auth("not-a-session"), 401, "no_session"},
		{"checkout without the CSRF token", "/v1/me/checkout", map[string]string{"plan": "pro"}, noCSRF, 403, "csrf_token_invalid"},
		{"checkout with another session's CSRF token", "/v1/me/checkout", map[string]string{"plan": "pro"},
			map[string]string{"Cookie": httpx.SessionCookie + "=" + freeSession, httpx.CSRFHeader: csrf(payerSession)}, 403, "csrf_token_invalid"},
		{"checkout to Pro", "/v1/me/checkout", map[string]string{"plan": "Pro"}, auth(freeSession), 200, ""},
		{"checkout without a plan", "/v1/me/checkout", map[string]string{}, auth(freeSession), 400, "plan_required"},
		{"checkout with a body that is not JSON", "/v1/me/checkout", []byte("plan=pro"), auth(freeSession), 400, "invalid_json"},
		{"checkout to an unknown plan", "/v1/me/checkout", map[string]string{"plan": "gold"}, auth(freeSession), 400, "invalid_plan"},
		{"checkout to Free", "/v1/me/checkout", map[string]string{"plan": "free"}, auth(freeSession), 400, "plan_not_billable"},
		{"checkout to Enterprise", "/v1/me/checkout", map[string]string{"plan": "enterprise"}, auth(freeSession), 400, "plan_not_self_serve"},
		{"checkout to the plan one has", "/v1/me/checkout", map[string]string{"plan": "pro"}, auth(payerSession), 409, "not_an_upgrade"},
		{"checkout while paying through Stripe", "/v1/me/checkout", map[string]string{"plan": "scale"}, auth(payerSession), 409, "subscription_exists"},
		{"portal without a Stripe customer", "/v1/me/portal", nil, auth(freeSession), 409, "no_stripe_customer"},
		{"portal without the CSRF token", "/v1/me/portal", nil, noCSRF, 403, "csrf_token_invalid"},
		{"portal", "/v1/me/portal", nil, auth(payerSession), 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := post(t, w.url+tt.path, tt.body, tt.headers)
			if code != tt.want {
				t.Fatalf("status %d, want %d: %v", code, tt.want, body)
			}
			if tt.wantCode != "" && errCode(body) != tt.wantCode {
				t.Fatalf("code %q, want %q: %v", errCode(body), tt.wantCode, body)
			}
			if code == 200 {
				if u, _ := body["url"].(string); !strings.HasPrefix(u, "http") {
					t.Fatalf("no url in %v", body)
				}
				if _, hasID := body["id"]; hasID != (tt.path == "/v1/me/checkout") {
					t.Fatalf("id present = %v in %v", hasID, body)
				}
			}
		})
	}
}

func TestPublicCheckout(t *testing.T) {
	w := newWorld(t, "")
	w.createAccount("free@example.com", account.Free)
	w.createAccount("pro@example.com", account.Pro)
	admin := map[string]string{"X-Admin-Key": adminKey}
	tests := []struct {
		name     string
		body     map[string]string
		headers  map[string]string
		want     int
		wantCode string
	}{
		{"upgrade", map[string]string{"email": "Free@Example.com", "plan": "starter"}, nil, 200, ""},
		{"no account", map[string]string{"email": "nobody@example.com", "plan": "pro"}, nil, 404, "account_not_found"},
		{"bad e-mail", map[string]string{"email": "nobody", "plan": "pro"}, nil, 400, "invalid_email"},
		{"not an upgrade", map[string]string{"email": "pro@example.com", "plan": "starter"}, nil, 409, "not_an_upgrade"},
		{"not self-serve", map[string]string{"email": "free@example.com", "plan": "enterprise"}, nil, 400, "plan_not_self_serve"},
		{"admin bypasses self-serve", map[string]string{"email": "free@example.com", "plan": "enterprise"}, admin, 200, ""},
		{"admin bypasses the upgrade rule", map[string]string{"email": "pro@example.com", "plan": "starter"}, admin, 200, ""},
		{"admin cannot bill Free", map[string]string{"email": "pro@example.com", "plan": "free"}, admin, 400, "plan_not_billable"},
		{"wrong admin key", map[string]string{"email": "free@example.com", "plan": "enterprise"}, map[string]string{"X-Admin-Key": adminKey + "x"}, 403, "invalid_admin_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := post(t, w.url+"/v1/checkout/session", tt.body, tt.headers)
			if code != tt.want {
				t.Fatalf("status %d, want %d: %v", code, tt.want, body)
			}
			if tt.wantCode != "" && errCode(body) != tt.wantCode {
				t.Fatalf("code %q, want %q: %v", errCode(body), tt.wantCode, body)
			}
			if code == 200 {
				if id, _ := body["id"].(string); id == "" {
					t.Fatalf("no id in %v", body)
				}
			}
		})
	}
}

// TestGoAPI is what the account pages call: the application's billing use case.
func TestGoAPI(t *testing.T) {
	w := newWorld(t, "")
	b := w.billing()
	ctx := context.Background()
	acct := billing.Account{ID: w.createAccount("page@example.com", account.Free).AccountID, Email: "page@example.com", Plan: account.Free}
	page := "http://127.0.0.1:1/account"
	tests := []struct {
		name    string
		call    func() (string, error)
		wantErr error
	}{
		{"checkout", func() (string, error) { return sessionURL(b.Checkout(ctx, acct, account.Pro, false, page+"?ok", page)) }, nil},
		{"checkout with a relative URL", func() (string, error) { return sessionURL(b.Checkout(ctx, acct, account.Pro, false, "/account", page)) }, domain.ErrInvalid},
		{"checkout to a cheaper plan", func() (string, error) {
			return sessionURL(b.Checkout(ctx, billing.Account{ID: acct.ID, Plan: account.Scale}, account.Pro, false, page, page))
		}, domain.ErrConflict},
		{"portal without customer", func() (string, error) { return sessionURL(b.Portal(ctx, acct, page)) }, domain.ErrConflict},
		{"portal", func() (string, error) {
			return sessionURL(b.Portal(ctx, billing.Account{ID: acct.ID, Plan: account.Pro, StripeCustomerID: "cus_1"}, page))
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := tt.call()
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || !strings.HasPrefix(u, "http") {
				t.Fatalf("url %q, err %v", u, err)
			}
		})
	}
}

func TestWithoutBillingEverythingIs503(t *testing.T) {
	w := newWorld(t, "none")
	w.createAccount("free@example.com", account.Free)
	session := w.signIn("free@example.com")
	auth := map[string]string{"Cookie": httpx.SessionCookie + "=" + session, httpx.CSRFHeader: csrf(session)}
	for _, c := range []struct {
		path string
		body any
		h    map[string]string
	}{
		{"/v1/me/checkout", map[string]string{"plan": "pro"}, auth},
		{"/v1/me/portal", nil, auth},
		{"/v1/checkout/session", map[string]string{"email": "free@example.com", "plan": "pro"}, nil},
	} {
		if code, body := post(t, w.url+c.path, c.body, c.h); code != http.StatusServiceUnavailable {
			t.Errorf("%s: %d, want 503: %v", c.path, code, body)
		}
	}
}

// sessionURL is the URL of a session the billing use case started.
func sessionURL(s payments.Session, err error) (string, error) { return s.URL, err }
