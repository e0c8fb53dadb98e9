package billingapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/arr-dev/arr/domain/account"
)

// stripeEvent is a Stripe event envelope around a data object.
func stripeEvent(id, typ, object string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"object":"event","api_version":"2026-03-25.dahlia","created":%d,"livemode":false,"type":%q,"data":{"object":%s}}`,
		id, time.Now().Unix(), typ, object)
}

func checkoutCompleted(id, accountID string, plan account.Plan, customer string) []byte {
	return stripeEvent(id, "checkout.session.completed", fmt.Sprintf(
		`{"id":"cs_test_%s","object":"checkout.session","mode":"subscription","status":"complete","payment_status":"paid","client_reference_id":%q,"customer":%q,"subscription":"sub_%s","metadata":{"plan":%q,"account_id":%q}}`,
		id, accountID, customer, id, plan, accountID))
}

func subscriptionEvent(id, typ, status, customer string, unitAmount int64) []byte {
	return stripeEvent(id, typ, fmt.Sprintf(
		`{"id":"sub_1","object":"subscription","status":%q,"customer":%q,"metadata":{},"items":{"object":"list","data":[{"id":"si_1","price":{"id":"price_1","unit_amount":%d,"currency":"usd","recurring":{"interval":"month","interval_count":1}}}]}}`,
		status, customer, unitAmount))
}

// sign returns the Stripe-Signature header of body under secret.
func sign(body []byte, secret string) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret}).Header
}

// TestWebhook plays a sequence of webhooks against one account: each step
// says what the response, the plan and the number of appended events must
// be afterwards.
func TestWebhook(t *testing.T) {
	w := newWorld(t, "")
	acct := w.createAccount("payer@example.com", account.Free)
	id := acct.AccountID.String()
	completed := checkoutCompleted("evt_checkout_1", id, account.Pro, "cus_payer")
	toScale := subscriptionEvent("evt_sub_updated_1", "customer.subscription.updated", "active", "cus_payer", 49_900)
	steps := []struct {
		name         string
		body         []byte
		signature    string // "" signs with the right secret; "-" sends none
		wantStatus   int
		wantOutcome  string
		wantPlan     account.Plan
		wantAppended uint64
	}{
		{name: "bad signature", body: completed, signature: sign(completed, "whsec_wrong"), wantStatus: 400, wantPlan: account.Free},
		{name: "missing signature", body: completed, signature: "-", wantStatus: 400, wantPlan: account.Free},
		{name: "tampered body", body: checkoutCompleted("evt_checkout_1", id, account.Scale, "cus_payer"), signature: sign(completed, webhookSecret), wantStatus: 400, wantPlan: account.Free},
		{name: "checkout completed moves to Pro", body: completed, wantStatus: 200, wantOutcome: "plan_changed", wantPlan: account.Pro, wantAppended: 1},
		{name: "the same webhook again changes nothing", body: completed, wantStatus: 200, wantOutcome: "unchanged", wantPlan: account.Pro},
		{name: "unknown event type is ignored", body: stripeEvent("evt_invoice_1", "invoice.paid", `{"id":"in_1","object":"invoice"}`), wantStatus: 200, wantOutcome: "ignored", wantPlan: account.Pro},
		{name: "unpaid checkout waits", body: stripeEvent("evt_checkout_2", "checkout.session.completed", fmt.Sprintf(`{"id":"cs_2","object":"checkout.session","mode":"subscription","payment_status":"unpaid","client_reference_id":%q,"customer":"cus_payer","metadata":{"plan":"scale"}}`, id)),
			wantStatus: 200, wantOutcome: "ignored", wantPlan: account.Pro},
		{name: "subscription updated to Scale's price, found by customer", body: toScale, wantStatus: 200, wantOutcome: "plan_changed", wantPlan: account.Scale, wantAppended: 1},
		{name: "past_due changes nothing", body: subscriptionEvent("evt_sub_updated_2", "customer.subscription.updated", "past_due", "cus_payer", 49_900), wantStatus: 200, wantOutcome: "ignored", wantPlan: account.Scale},
		{name: "subscription deleted moves to Free", body: subscriptionEvent("evt_sub_deleted_1", "customer.subscription.deleted", "canceled", "cus_payer", 49_900), wantStatus: 200, wantOutcome: "plan_changed", wantPlan: account.Free, wantAppended: 1},
		{name: "a late replay of an applied event changes nothing", body: toScale, wantStatus: 200, wantOutcome: "unchanged", wantPlan: account.Free},
		{name: "unknown customer is ignored", body: subscriptionEvent("evt_sub_updated_3", "customer.subscription.updated", "active", "cus_nobody", 9_900), wantStatus: 200, wantOutcome: "ignored", wantPlan: account.Free},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			headers := map[string]string{"Stripe-Signature": s.signature}
			switch s.signature {
			case "":
				headers["Stripe-Signature"] = sign(s.body, webhookSecret)
			case "-":
				delete(headers, "Stripe-Signature")
			}
			before := w.head()
			code, body := post(t, w.url+"/v1/stripe/webhook", s.body, headers)
			if code != s.wantStatus {
				t.Fatalf("status %d, want %d: %v", code, s.wantStatus, body)
			}
			if s.wantStatus == http.StatusBadRequest && errCode(body) != "invalid_signature" {
				t.Fatalf("error code %q, want invalid_signature: %v", errCode(body), body)
			}
			if s.wantOutcome != "" && body["outcome"] != s.wantOutcome {
				t.Fatalf("outcome %v, want %s: %v", body["outcome"], s.wantOutcome, body)
			}
			// The response is sent after the read model shows the change.
			if plan, _ := w.plan(id); plan != s.wantPlan {
				t.Fatalf("plan %s, want %s", plan, s.wantPlan)
			}
			if got := w.head() - before; got != s.wantAppended {
				t.Fatalf("%d events appended, want %d", got, s.wantAppended)
			}
		})
	}
	if _, customer := w.plan(id); customer != "cus_payer" {
		t.Fatalf("stripe customer %q, want cus_payer", customer)
	}
}

func TestWebhookWithoutBilling(t *testing.T) {
	w := newWorld(t, "none")
	body := stripeEvent("evt_1", "invoice.paid", `{}`)
	code, resp := post(t, w.url+"/v1/stripe/webhook", body, map[string]string{"Stripe-Signature": sign(body, webhookSecret)})
	if code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503: %v", code, resp)
	}
}

func TestWebhookBodyLimit(t *testing.T) {
	w := newWorld(t, "")
	body := stripeEvent("evt_big", "invoice.paid", fmt.Sprintf(`{"pad":%q}`, make([]byte, 300<<10)))
	code, resp := post(t, w.url+"/v1/stripe/webhook", body, map[string]string{"Stripe-Signature": sign(body, webhookSecret)})
	if code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413: %v", code, resp)
	}
}
