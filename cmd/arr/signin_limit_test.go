package main_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/mail/mailtest"
)

// TestSignInMailIsRateLimited: the sign-in form cannot flood a mailbox. Five
// links per address per clock hour are sent; the sixth request is a 429 page
// with Retry-After and sends nothing.
func TestSignInMailIsRateLimited(t *testing.T) {
	mail := mailtest.Start(t, mailtest.Options{})
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "SMTP_URL="+mail.URL)
	e.up()
	w := newWeb(t)
	form := w.get(e.records + "/account")
	mustStatus(t, "GET /account", form, 200)
	csrf := hidden(t, form, "csrf_token")
	for i := 1; i <= 6; i++ {
		p := w.post(e.records+"/account/signin", url.Values{"email": {"Victim@Example.com"}, "csrf_token": {csrf}})
		if i <= 5 {
			mustStatus(t, "sign-in request", p, 200)
			mail.Next(t)
			continue
		}
		mustStatus(t, "sixth sign-in request for one address", p, 429)
		if p.header.Get("Retry-After") == "" || !strings.Contains(p.body, "at most 5 per clock hour") {
			t.Fatalf("429 without Retry-After or a clear message: %q", p.body)
		}
	}
	// Another address from the same client is still served.
	p := w.post(e.records+"/account/signin", url.Values{"email": {"someone@example.com"}, "csrf_token": {csrf}})
	mustStatus(t, "a different address", p, 200)
	if got := mail.Next(t); !strings.Contains(strings.Join(got.To, ","), "someone@example.com") {
		t.Fatalf("the next mail went to %v, want someone@example.com (the refused request must send nothing)", got.To)
	}
}
