package main_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/arr-dev/arr/adapters/payments/stripemocktest"
	"github.com/arr-dev/arr/commands"
	"github.com/arr-dev/arr/domain/account"
	"github.com/arr-dev/arr/domain/signin"
)

const (
	e2eWebhookSecret = "whsec_e2e_secret_value"
	e2eAdminKey      = "e2e-admin-key-value"
)

// billingEnv is `arr up` with Stripe pointed at a private stripe-mock.
func billingEnv(t *testing.T) (*env, *proc) {
	t.Helper()
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv,
		"STRIPE_API_KEY="+stripemocktest.APIKey, "STRIPE_API_BASE="+stripemocktest.Start(t),
		"STRIPE_WEBHOOK_SECRET="+e2eWebhookSecret, "ARR_ADMIN_KEY="+e2eAdminKey,
		"ARR_LOG_LEVEL=debug") // the most verbose log, to show no secret is in it
	return e, e.up()
}

// session signs an address in by running the magic-link commands against
// the test database, and waits until the running arr's read model knows the
// session. It returns the cookie value.
func session(t *testing.T, pool *pgxpool.Pool, cmds commands.Commands, email string) (token string, accountID string) {
	t.Helper()
	ctx := context.Background()
	link, err := cmds.RequestSignIn.Handle(ctx, commands.RequestSignIn{Email: email, Service: account.Gateway})
	if err != nil {
		t.Fatal(err)
	}
	s, err := cmds.CompleteSignIn.Handle(ctx, commands.CompleteSignIn{LinkID: link.LinkID.String(), Token: link.Token})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM rm_identity.sessions WHERE token_hash = $1`, signin.HashToken(s.SessionToken)).Scan(&n); err == nil && n == 1 {
			return s.SessionToken, s.AccountID.String()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session did not reach the identity read model within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// csrfFor is the CSRF token of a session, computed as httpx.CSRFToken does.
func csrfFor(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("arr csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func postJSON(t *testing.T, url string, body []byte, headers map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("POST %s: %d, not JSON: %q", url, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

func TestBillingEndToEnd(t *testing.T) {
	e, p := billingEnv(t)
	pool, st := openStore(t, e.dbURL)
	cmds, err := commands.New(commands.Config{Store: st, Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	token, accountID := session(t, pool, cmds, "buyer@example.com")
	auth := map[string]string{"Cookie": "arr_session=" + token, "X-CSRF-Token": csrfFor(token)}
	accountEvents := func() int {
		var n int
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE stream_id = $1`, "account-"+accountID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	readModelPlan := func() string {
		var plan string
		if err := pool.QueryRow(context.Background(), `SELECT plan FROM rm_identity.accounts WHERE account_id = $1`, accountID).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		return plan
	}
	completed := fmt.Appendf(nil, `{"id":"evt_e2e_checkout","object":"event","api_version":"2026-03-25.dahlia","created":%d,"type":"checkout.session.completed","data":{"object":{"id":"cs_test_e2e","object":"checkout.session","mode":"subscription","payment_status":"paid","client_reference_id":%q,"customer":"cus_e2e","subscription":"sub_e2e","metadata":{"plan":"pro","account_id":%q}}}}`,
		time.Now().Unix(), accountID, accountID)
	signed := func(body []byte, secret string) map[string]string {
		return map[string]string{"Stripe-Signature": webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret}).Header}
	}

	steps := []struct {
		name        string
		path        string
		body        []byte
		headers     map[string]string
		want        int
		wantPlan    string
		wantNewEvts int
		check       func(t *testing.T, body map[string]any)
	}{
		{name: "checkout without the CSRF token is 403", path: "/v1/me/checkout", body: []byte(`{"plan":"pro"}`),
			headers: map[string]string{"Cookie": "arr_session=" + token}, want: 403, wantPlan: "free"},
		{name: "checkout returns stripe-mock's Checkout URL", path: "/v1/me/checkout", body: []byte(`{"plan":"pro"}`), headers: auth, want: 200, wantPlan: "free",
			check: func(t *testing.T, b map[string]any) {
				if u, _ := b["url"].(string); !strings.HasPrefix(u, "http") || b["id"] == "" {
					t.Fatalf("want an id and a url: %v", b)
				}
			}},
		{name: "portal before any checkout is 409", path: "/v1/me/portal", headers: auth, want: 409, wantPlan: "free"},
		{name: "badly signed webhook is 400 and appends nothing", path: "/v1/stripe/webhook", body: completed, headers: signed(completed, "whsec_wrong"), want: 400, wantPlan: "free"},
		{name: "signed checkout.session.completed moves to Pro", path: "/v1/stripe/webhook", body: completed, headers: signed(completed, e2eWebhookSecret), want: 200, wantPlan: "pro", wantNewEvts: 1},
		{name: "the same webhook again changes nothing", path: "/v1/stripe/webhook", body: completed, headers: signed(completed, e2eWebhookSecret), want: 200, wantPlan: "pro"},
		{name: "portal now opens", path: "/v1/me/portal", headers: auth, want: 200, wantPlan: "pro"},
		{name: "public checkout with the admin key", path: "/v1/checkout/session", body: []byte(`{"email":"buyer@example.com","plan":"enterprise"}`),
			headers: map[string]string{"X-Admin-Key": e2eAdminKey}, want: 200, wantPlan: "pro"},
		{name: "public checkout below the plan", path: "/v1/checkout/session", body: []byte(`{"email":"buyer@example.com","plan":"starter"}`), want: 409, wantPlan: "pro"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			before := accountEvents()
			code, body := postJSON(t, e.gateway+s.path, s.body, s.headers)
			if code != s.want {
				t.Fatalf("status %d, want %d: %v", code, s.want, body)
			}
			if s.check != nil {
				s.check(t, body)
			}
			if got := readModelPlan(); got != s.wantPlan {
				t.Fatalf("plan %s in the read model, want %s", got, s.wantPlan)
			}
			if got := accountEvents() - before; got != s.wantNewEvts {
				t.Fatalf("%d events appended to the account, want %d", got, s.wantNewEvts)
			}
		})
	}

	// GET /v1/me (when this build has it) shows the plan at once.
	if code, body := get(t, e.gateway+"/v1/me", map[string]string{"Cookie": "arr_session=" + token}); code == 200 {
		if !bytes.Contains(body, []byte(`"pro"`)) {
			t.Fatalf("GET /v1/me does not show pro: %s", body)
		}
	}

	code, body := get(t, e.gateway+"/healthz", nil)
	var health struct {
		Status          string `json:"status"`
		PaymentProvider struct {
			Status string `json:"status"`
		} `json:"payment_provider"`
	}
	if err := json.Unmarshal(body, &health); err != nil || code != 200 || health.Status != "ok" || health.PaymentProvider.Status != "ok" {
		t.Fatalf("healthz %d %s: want ok with payment_provider ok", code, body)
	}

	// Secrets never reach the (debug-level) log or --help.
	if !strings.Contains(p.logs.String(), "Stripe billing on") {
		t.Fatalf("the log does not say billing is on:\n%s", p.logs.String())
	}
	help, _, _ := e.arr("--help")
	for _, secret := range []string{stripemocktest.APIKey, e2eWebhookSecret, e2eAdminKey} {
		if strings.Contains(p.logs.String(), secret) || strings.Contains(help, secret) {
			t.Fatalf("a secret (%s…) is in the log or in --help", secret[:6])
		}
	}
}
