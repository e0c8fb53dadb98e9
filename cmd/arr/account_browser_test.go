package main_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"github.com/arr-dev/arr/adapters/mail/mailtest"
	"github.com/arr-dev/arr/adapters/payments/stripemocktest"
)

// chromiumPath is Debian's chromium, which scripts/test.sh installs.
const chromiumPath = "/usr/bin/chromium"

// newBrowser starts headless Chromium with a fresh profile. Every request
// to a host off this machine (Stripe's hosted pages) is answered inside the
// browser by a stand-in page and reported on the returned channel, so the
// test sends no traffic off the machine and sees where the browser went.
func newBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) (context.Context, <-chan string) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("Chromium is not installed at %s: run scripts/test.sh (it installs Debian's chromium) or apt-get install chromium", chromiumPath)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.Flag("dns-prefetch-disable", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1100, 1500),
	)
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })

	outside := make(chan string, 16)
	paused := chromedp.Events(ctx, fetch.RequestPaused)
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{}); err != nil {
		t.Fatalf("starting Chromium (%s): %v", chromiumPath, err)
	}
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			u, _ := url.Parse(ev.Request.URL)
			if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsLoopback() {
				_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
				continue
			}
			select {
			case outside <- ev.Request.URL:
			default:
			}
			_, _ = chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{
				RequestID: ev.RequestID, ResponseCode: 200,
				ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: "text/html; charset=utf-8"}},
				Body:            []byte(`<!doctype html><title>Stripe Checkout</title><h1 id="stand-in">Stripe Checkout (a stand-in page served inside the test browser)</h1>`),
			})
		}
	}()
	return ctx, outside
}

// artifactDir is where screenshots go: $ARR_ARTIFACTS/<test> when set, else
// the test's artifact directory (kept with go test -artifacts).
func artifactDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("ARR_ARTIFACTS"); d != "" {
		dir := filepath.Join(d, strings.ReplaceAll(t.Name(), "/", "_"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.ArtifactDir()
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

func must[T any](t *testing.T, what string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

// stripeMockCheckoutURL is the url of the Checkout Sessions stripe-mock
// returns.
func stripeMockCheckoutURL(t *testing.T, base string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/checkout/sessions/cs_test_arr", nil)
	req.SetBasicAuth(stripemocktest.APIKey, "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct {
		URL string `json:"url"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || s.URL == "" {
		t.Fatalf("stripe-mock checkout session: %d %v", resp.StatusCode, err)
	}
	return s.URL
}

// TestAccountPageInChromium signs up on the gateway's account page in
// headless Chromium, follows the link from the mail, sees the first key
// once, mints a second, revokes it and starts an upgrade that reaches the
// Stripe Checkout URL stripe-mock hands out.
func TestAccountPageInChromium(t *testing.T) {
	mail := mailtest.Start(t, mailtest.Options{})
	stripe := stripemocktest.Start(t)
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "SMTP_URL="+mail.URL, "STRIPE_API_KEY="+stripemocktest.APIKey, "STRIPE_API_BASE="+stripe)
	e.up()
	gw := e.gateway
	ctx, outside := newBrowser(t)
	shots := artifactDir(t)

	// Sign up: the e-mail form, then the link from the mail.
	if err := chromedp.Do(ctx, chromedp.Navigate(gw+"/account"), chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), "carol@example.com")); err != nil {
		t.Fatalf("the sign-in form: %v", err)
	}
	screenshot(t, ctx, shots, "01-signin.png")
	if r, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.ID("send-link"))); err != nil || r.Status != 200 {
		t.Fatalf("sending the link: %v %v", r, err)
	}
	sent := must[string](t, "the sent page")(chromedp.Run(ctx, chromedp.Text(chromedp.ID("sent"), chromedp.NodeVisible)))
	if !strings.Contains(sent, "carol@example.com") {
		t.Fatalf("sent page says %q", sent)
	}
	link := mail.Next(t).Link(t, "/account/signin/verify")
	if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("confirm"))); err != nil {
		t.Fatalf("opening the link from the mail: %v", err)
	}
	r, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.ID("confirm")))
	if err != nil || r.Status != 200 {
		t.Fatalf("confirming the sign-in: %v %v", r, err)
	}
	first := must[string](t, "the first key")(chromedp.Run(ctx, chromedp.Text(chromedp.ID("new-key-secret"), chromedp.NodeVisible)))
	if !strings.HasPrefix(first, "arr_gw_") {
		t.Fatalf("first key %q", first)
	}
	screenshot(t, ctx, shots, "02-first-key.png")
	if code, body := get(t, gw+"/v1/key", map[string]string{"Authorization": "Bearer " + first}); code != 200 {
		t.Fatalf("the first key: %d %s", code, body)
	}

	// Shown once: not on the page after a reload.
	if err := chromedp.Do(ctx, chromedp.Navigate(gw+"/account"), chromedp.WaitVisible(chromedp.ID("keys"))); err != nil {
		t.Fatal(err)
	}
	page := must[string](t, "the account page")(chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html"))))
	if strings.Contains(page, first) || strings.Contains(page, "new-key-secret") {
		t.Fatal("the first key's secret is on the page again after a reload")
	}

	// Mint a second key, then revoke it.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("key-name"), "second key")); err != nil {
		t.Fatal(err)
	}
	if r, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.ID("mint"))); err != nil || r.Status != 201 {
		t.Fatalf("minting: %v %v", r, err)
	}
	second := must[string](t, "the second key")(chromedp.Run(ctx, chromedp.Text(chromedp.ID("new-key-secret"), chromedp.NodeVisible)))
	if !strings.HasPrefix(second, "arr_gw_") || second == first {
		t.Fatalf("second key %q", second)
	}
	screenshot(t, ctx, shots, "03-second-key.png")
	if code, _ := get(t, gw+"/v1/key", map[string]string{"Authorization": "Bearer " + second}); code != 200 {
		t.Fatalf("the second key: %d", code)
	}
	revoke := chromedp.Search(`//tr[td[contains(., "second key")]]//button[text()="Revoke"]`)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(revoke)); err != nil {
		t.Fatal(err)
	}
	if r, err := chromedp.RunResponse(ctx, chromedp.Click(revoke)); err != nil || r.Status != 200 {
		t.Fatalf("revoking: %v %v", r, err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("notice"))); err != nil {
		t.Fatal(err)
	}
	code, body := get(t, gw+"/v1/key", map[string]string{"Authorization": "Bearer " + second})
	assertAuthError(t, "gateway", code, body)
	if code, _ := get(t, gw+"/v1/key", map[string]string{"Authorization": "Bearer " + first}); code != 200 {
		t.Fatal("revoking the second key broke the first")
	}
	screenshot(t, ctx, shots, "04-revoked.png")

	// Upgrade: pick Pro, and the browser lands on stripe-mock's Checkout URL.
	want := stripeMockCheckoutURL(t, stripe)
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("plan-select"), "pro")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("upgrade")), chromedp.WaitVisible(chromedp.ID("stand-in"))); err != nil {
		t.Fatalf("upgrading: %v", err)
	}
	var went string
	select {
	case went = <-outside:
	default:
		t.Fatal("the browser did not leave the machine's pages after Upgrade")
	}
	loc := must[string](t, "location")(chromedp.Run(ctx, chromedp.Location()))
	if went != want || loc != want {
		t.Fatalf("after Upgrade the browser went to %q (location %q); stripe-mock's Checkout URL is %q", went, loc, want)
	}
	screenshot(t, ctx, shots, "05-checkout.png")
}
