package main_test

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/mail/mailtest"
	"github.com/arr-dev/arr/adapters/payments/stripemocktest"
)

// web is a browser without JavaScript: a cookie jar, form posts, and
// redirects shown to the test instead of followed.
type web struct {
	t *testing.T
	c *http.Client
}

func newWeb(t *testing.T) *web {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &web{t: t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	body   string
	header http.Header
}

func (w *web) do(req *http.Request) page {
	w.t.Helper()
	resp, err := w.c.Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, body: string(b), header: resp.Header}
}

func (w *web) get(u string) page {
	w.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	return w.do(req)
}

func (w *web) post(u string, form url.Values) page {
	w.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return w.do(req)
}

// json sends a JSON request with the given headers and decodes the answer.
func (w *web) json(method, u string, body any, headers map[string]string, out any) int {
	w.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, u, r)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	p := w.do(req)
	if out != nil {
		if err := json.Unmarshal([]byte(p.body), out); err != nil {
			w.t.Fatalf("%s %s: %d %q is not JSON: %v", method, u, p.status, p.body, err)
		}
	}
	return p.status
}

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// hidden returns the value of the first hidden field of that name.
func hidden(t *testing.T, p page, name string) string {
	t.Helper()
	for _, m := range hiddenRE.FindAllStringSubmatch(p.body, -1) {
		if m[1] == name {
			return html.UnescapeString(m[2])
		}
	}
	t.Fatalf("no hidden field %q on the page (status %d):\n%s", name, p.status, p.body)
	return ""
}

var secretRE = regexp.MustCompile(`<code id="new-key-secret">([^<]+)</code>`)

// newSecret returns the secret a page shows once, or "".
func newSecret(p page) string {
	if m := secretRE.FindStringSubmatch(p.body); m != nil {
		return m[1]
	}
	return ""
}

func mustStatus(t *testing.T, what string, p page, want int) {
	t.Helper()
	if p.status != want {
		t.Fatalf("%s: status %d, want %d\n%s", what, p.status, want, p.body)
	}
}

// signIn asks base's account page for a link to email, reads it from the
// mail and confirms it; it returns the confirmation's answer.
func signIn(t *testing.T, w *web, mail *mailtest.Server, base, email string) page {
	t.Helper()
	form := w.get(base + "/account")
	mustStatus(t, "GET /account", form, 200)
	sent := w.post(base+"/account/signin", url.Values{"email": {email}, "csrf_token": {hidden(t, form, "csrf_token")}})
	mustStatus(t, "POST /account/signin", sent, 200)
	link := mail.Next(t).Link(t, "/account/signin/verify")
	if !strings.HasPrefix(link, base+"/account/signin/verify?") {
		t.Fatalf("the mailed link %q does not point at %s", link, base)
	}
	confirm := w.get(link)
	mustStatus(t, "GET the mailed link", confirm, 200)
	return w.post(base+"/account/signin/verify", url.Values{
		"link": {hidden(t, confirm, "link")}, "token": {hidden(t, confirm, "token")}, "csrf_token": {hidden(t, confirm, "csrf_token")}})
}

type meBody struct {
	Object    string `json:"object"`
	ID        string `json:"id"`
	Email     string `json:"email"`
	Plan      string `json:"plan"`
	PlanName  string `json:"plan_name"`
	CreatedAt string `json:"created_at"`
	CSRFToken string `json:"csrf_token"`
	Keys      struct {
		Active    int `json:"active"`
		MaxActive int `json:"max_active"`
		Data      []struct {
			ID        string  `json:"id"`
			Name      string  `json:"name"`
			Prefix    string  `json:"prefix"`
			Hint      string  `json:"hint"`
			Service   string  `json:"service"`
			RevokedAt *string `json:"revoked_at"`
			Secret    *string `json:"secret"`
		} `json:"data"`
	} `json:"keys"`
}

func TestAccountPagesAndSelfService(t *testing.T) {
	mail := mailtest.Start(t, mailtest.Options{})
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "SMTP_URL="+mail.URL, "ARR_MAIL_FROM=arr test <no-reply@arr.test>",
		"STRIPE_API_KEY="+stripemocktest.APIKey, "STRIPE_API_BASE="+stripemocktest.Start(t))
	e.up()
	gw := e.gateway
	alice := newWeb(t)

	// The form page: security headers, no session yet.
	form := alice.get(gw + "/account")
	mustStatus(t, "GET /account", form, 200)
	for h, want := range map[string]string{"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"} {
		if got := form.header.Get(h); got != want {
			t.Fatalf("%s = %q, want %q", h, got, want)
		}
	}
	if csp := form.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("Content-Security-Policy %q", csp)
	}
	if !strings.Contains(form.body, `id="signin-form"`) {
		t.Fatalf("no sign-in form on /account:\n%s", form.body)
	}

	// Asking for a link: the same answer for a new and a known address;
	// without the form token, 403 and no mail.
	mustStatus(t, "sign-in without form token", alice.post(gw+"/account/signin", url.Values{"email": {"alice@example.com"}}), 403)
	if got := mail.Pending(); len(got) != 0 {
		t.Fatalf("a refused request sent %d mails", len(got))
	}
	mustStatus(t, "invalid address", alice.post(gw+"/account/signin", url.Values{"email": {"not-an-address"}, "csrf_token": {hidden(t, form, "csrf_token")}}), 400)

	// Sign-up on the gateway page: the first key, shown once.
	first := signIn(t, alice, mail, gw, "Alice@Example.com")
	mustStatus(t, "confirming the link", first, 200)
	firstSecret := newSecret(first)
	if !strings.HasPrefix(firstSecret, "arr_gw_") {
		t.Fatalf("the sign-up page shows no first gateway key:\n%s", first.body)
	}
	if code, body := get(t, gw+"/v1/key", map[string]string{"Authorization": "Bearer " + firstSecret}); code != 200 {
		t.Fatalf("the first key does not authenticate at once: %d %s", code, body)
	}
	sessCookie := ""
	for _, c := range first.header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "arr_session=") {
			sessCookie = c
		}
	}
	if !strings.Contains(sessCookie, "HttpOnly") || !strings.Contains(sessCookie, "SameSite=Lax") || strings.Contains(sessCookie, "Secure") {
		t.Fatalf("session cookie %q: want HttpOnly, SameSite=Lax, not Secure over plain HTTP", sessCookie)
	}
	reload := alice.get(gw + "/account")
	mustStatus(t, "reloading /account", reload, 200)
	if strings.Contains(reload.body, firstSecret) || newSecret(reload) != "" {
		t.Fatal("the first key's secret is shown again on reload")
	}
	if !strings.Contains(reload.body, "alice@example.com") || !strings.Contains(reload.body, firstSecret[len(firstSecret)-4:]) || !strings.Contains(reload.body, `id="usage-chart"`) {
		t.Fatalf("the account page lacks the e-mail, the key's hint or the usage chart:\n%s", reload.body)
	}
	csrf := hidden(t, reload, "csrf_token")

	// The same address again (a known account) gets the same answer.
	known := alice.post(gw+"/account/signin", url.Values{"email": {"alice@example.com"}, "csrf_token": {hidden(t, alice.get(gw+"/account/signin/verify?link=x&token=y"), "csrf_token")}})
	unknown := alice.post(gw+"/account/signin", url.Values{"email": {"nobody@example.com"}, "csrf_token": {hidden(t, alice.get(gw+"/account/signin/verify?link=x&token=y"), "csrf_token")}})
	if known.status != unknown.status || strings.ReplaceAll(known.body, "alice@example.com", "X") != strings.ReplaceAll(unknown.body, "nobody@example.com", "X") {
		t.Fatalf("the answer differs for a known and an unknown address:\n%s\n---\n%s", known.body, unknown.body)
	}
	knownLink, unknownLink := mail.Next(t), mail.Next(t)
	if knownLink.To[0] != "alice@example.com" || unknownLink.To[0] != "nobody@example.com" {
		t.Fatalf("mails went to %v and %v", knownLink.To, unknownLink.To)
	}

	// A magic link works once.
	t.Run("magic link works once", func(t *testing.T) {
		w := newWeb(t)
		link := knownLink.Link(t, "/account/signin/verify")
		confirm := w.get(link)
		if confirm.header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("verify page Referrer-Policy %q", confirm.header.Get("Referrer-Policy"))
		}
		form := url.Values{"link": {hidden(t, confirm, "link")}, "token": {hidden(t, confirm, "token")}, "csrf_token": {hidden(t, confirm, "csrf_token")}}
		ok := w.post(gw+"/account/signin/verify", form)
		if ok.status != http.StatusSeeOther || ok.header.Get("Location") != "/account" || newSecret(ok) != "" {
			t.Fatalf("sign-in of a known account: %d %q (no new key expected)", ok.status, ok.header.Get("Location"))
		}
		again := w.post(gw+"/account/signin/verify", form)
		if again.status < 400 || again.status > 499 || !strings.Contains(again.body, "This sign-in link does not work") {
			t.Fatalf("second use of a link: %d\n%s", again.status, again.body)
		}
		tampered := url.Values{"link": form["link"], "token": {"x" + form.Get("token")[1:]}, "csrf_token": form["csrf_token"]}
		if p := w.post(gw+"/account/signin/verify", tampered); p.status != 400 {
			t.Fatalf("wrong token: %d", p.status)
		}
	})

	// Mint a second key on the page, see it once, revoke it: 401 at once.
	minted := alice.post(gw+"/account/keys", url.Values{"name": {"<laptop>"}, "csrf_token": {csrf}})
	mustStatus(t, "minting on the page", minted, 201)
	second := newSecret(minted)
	if !strings.HasPrefix(second, "arr_gw_") || second == firstSecret || !strings.Contains(minted.body, "&lt;laptop&gt;") || strings.Contains(minted.body, "<laptop>") {
		t.Fatalf("mint page: secret %q, or the name is not escaped:\n%s", second, minted.body)
	}
	if code, _ := get(t, gw+"/v1/key", map[string]string{"Authorization": "Bearer " + second}); code != 200 {
		t.Fatalf("the minted key does not authenticate at once: %d", code)
	}
	if p := alice.get(gw + "/account"); strings.Contains(p.body, second) {
		t.Fatal("the minted secret is shown again")
	}
	var me meBody
	if code := alice.json(http.MethodGet, gw+"/v1/me", nil, nil, &me); code != 200 {
		t.Fatalf("GET /v1/me: %d", code)
	}
	var secondID string
	for _, k := range me.Keys.Data {
		if k.Name == "<laptop>" {
			secondID = k.ID
		}
	}
	mustStatus(t, "revoke without CSRF token", alice.post(gw+"/account/keys/"+secondID+"/revoke", url.Values{}), 403)
	revoked := alice.post(gw+"/account/keys/"+secondID+"/revoke", url.Values{"csrf_token": {csrf}})
	if revoked.status != http.StatusSeeOther || revoked.header.Get("Location") != "/account?notice=revoked" {
		t.Fatalf("revoke: %d %q\n%s", revoked.status, revoked.header.Get("Location"), revoked.body)
	}
	code, body := get(t, gw+"/v1/key", map[string]string{"Authorization": "Bearer " + second})
	assertAuthError(t, "gateway", code, body)

	// CSRF: session POSTs without the token are 403 and change nothing.
	mustStatus(t, "mint without CSRF token", alice.post(gw+"/account/keys", url.Values{"name": {"x"}}), 403)
	mustStatus(t, "mint with a wrong CSRF token", alice.post(gw+"/account/keys", url.Values{"name": {"x"}, "csrf_token": {"forged"}}), 403)
	var errBody struct {
		Error struct{ Type, Code string } `json:"error"`
	}
	if code := alice.json(http.MethodPost, gw+"/v1/me/keys", map[string]string{"name": "x"}, nil, &errBody); code != 403 || errBody.Error.Code != "csrf_token_invalid" || errBody.Error.Type != "permission_error" {
		t.Fatalf("POST /v1/me/keys without X-CSRF-Token: %d %+v", code, errBody)
	}

	// GET /v1/me.
	me = meBody{}
	alice.json(http.MethodGet, gw+"/v1/me", nil, nil, &me)
	if me.Object != "account" || me.Email != "alice@example.com" || me.Plan != "free" || me.PlanName != "Free" || me.CSRFToken != csrf ||
		me.Keys.Active != 1 || me.Keys.MaxActive != 10 || len(me.Keys.Data) != 2 || me.CreatedAt == "" {
		t.Fatalf("GET /v1/me = %+v", me)
	}
	for _, k := range me.Keys.Data {
		if k.Secret != nil || k.Service != "gateway" || k.Prefix != "arr_gw_" || len(k.Hint) != 4 {
			t.Fatalf("key in /v1/me: %+v", k)
		}
	}

	// POST and DELETE /v1/me/keys with the CSRF header.
	hdr := map[string]string{"X-CSRF-Token": me.CSRFToken}
	var k struct {
		ID, Secret, Name, Prefix, Object string
	}
	if code := alice.json(http.MethodPost, gw+"/v1/me/keys", map[string]string{"name": "ci"}, hdr, &k); code != 201 || !strings.HasPrefix(k.Secret, "arr_gw_") || k.Name != "ci" || k.Object != "api_key" {
		t.Fatalf("POST /v1/me/keys: %d %+v", code, k)
	}
	if code, _ := get(t, gw+"/v1/key", map[string]string{"Authorization": "Bearer " + k.Secret}); code != 200 {
		t.Fatalf("key minted by POST /v1/me/keys: %d", code)
	}
	if code := alice.json(http.MethodPost, gw+"/v1/me/keys", map[string]any{"nmae": "typo"}, hdr, &errBody); code != 400 {
		t.Fatalf("unknown field: %d", code)
	}

	// Another account's key id is 404, on the JSON API and on the page.
	bob := newWeb(t)
	bobFirst := signIn(t, bob, mail, gw, "bob@example.com")
	bobSecret := newSecret(bobFirst)
	var bobMe meBody
	bob.json(http.MethodGet, gw+"/v1/me", nil, nil, &bobMe)
	bobHdr := map[string]string{"X-CSRF-Token": bobMe.CSRFToken}
	if code := bob.json(http.MethodDelete, gw+"/v1/me/keys/"+k.ID, nil, bobHdr, &errBody); code != 404 || errBody.Error.Code != "key_not_found" {
		t.Fatalf("DELETE another account's key: %d %+v", code, errBody)
	}
	if p := bob.post(gw+"/account/keys/"+k.ID+"/revoke", url.Values{"csrf_token": {bobMe.CSRFToken}}); p.status != 404 {
		t.Fatalf("revoking another account's key on the page: %d", p.status)
	}
	if code := bob.json(http.MethodDelete, gw+"/v1/me/keys/not-a-uuid", nil, bobHdr, nil); code != 404 {
		t.Fatalf("DELETE a malformed key id: %d", code)
	}
	if code, _ := get(t, gw+"/v1/key", map[string]string{"Authorization": "Bearer " + k.Secret}); code != 200 {
		t.Fatal("bob's attempts affected alice's key")
	}
	if code, _ := get(t, gw+"/v1/key", map[string]string{"Authorization": "Bearer " + bobSecret}); code != 200 {
		t.Fatal("bob's first key does not work")
	}
	var del struct {
		ID        string  `json:"id"`
		Deleted   bool    `json:"deleted"`
		RevokedAt *string `json:"revoked_at"`
	}
	if code := alice.json(http.MethodDelete, gw+"/v1/me/keys/"+k.ID, nil, hdr, &del); code != 200 || !del.Deleted || del.RevokedAt == nil || del.ID != k.ID {
		t.Fatalf("DELETE own key: %d %+v", code, del)
	}
	code, body = get(t, gw+"/v1/key", map[string]string{"Authorization": "Bearer " + k.Secret})
	assertAuthError(t, "gateway", code, body)

	// GET /v1/me/usage.
	var usage struct {
		Object string `json:"object"`
		Days   int    `json:"days"`
		Total  *int64 `json:"total_requests"`
		Data   []struct {
			Date     string `json:"date"`
			Requests *int64 `json:"requests"`
		} `json:"data"`
	}
	for _, tc := range []struct {
		query string
		code  int
		days  int
	}{{"", 200, 30}, {"?days=7", 200, 7}, {"?days=90", 200, 90}, {"?days=0", 400, 0}, {"?days=91", 400, 0}, {"?days=x", 400, 0}} {
		usage.Data = nil
		got := alice.json(http.MethodGet, gw+"/v1/me/usage"+tc.query, nil, nil, &usage)
		if got != tc.code || (got == 200 && (usage.Object != "usage" || usage.Days != tc.days || len(usage.Data) != tc.days || usage.Total == nil || usage.Data[0].Requests == nil)) {
			t.Fatalf("GET /v1/me/usage%s: %d %+v", tc.query, got, usage)
		}
	}

	// GET /v1/plans, public.
	var plans struct {
		Object string `json:"object"`
		Data   []struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			Price     string `json:"monthly_price_usd"`
			Micro     int64  `json:"monthly_price_micro_usd"`
			SelfServe bool   `json:"self_serve"`
			Limits    map[string]any
			MaxActive map[string]int `json:"max_active_keys"`
		} `json:"data"`
	}
	code, body = get(t, gw+"/v1/plans", nil)
	if code != 200 || json.Unmarshal(body, &plans) != nil || len(plans.Data) != 5 {
		t.Fatalf("GET /v1/plans: %d %s", code, body)
	}
	want := []struct {
		id, name, price string
		micro           int64
		self            bool
	}{{"free", "Free", "0.00", 0, true}, {"starter", "Starter", "19.00", 19_000_000, true}, {"pro", "Pro", "99.00", 99_000_000, true},
		{"scale", "Scale", "499.00", 499_000_000, true}, {"enterprise", "Enterprise", "2000.00", 2_000_000_000, false}}
	for i, w := range want {
		p := plans.Data[i]
		if p.ID != w.id || p.Name != w.name || p.Price != w.price || p.Micro != w.micro || p.SelfServe != w.self || p.MaxActive["records"] != 5 {
			t.Fatalf("plan %d = %+v, want %+v", i, p, w)
		}
	}
	if plans.Data[0].Limits["gateway_requests_per_day"] != float64(100) || plans.Data[0].Limits["answer_calls_per_day"] != float64(100) ||
		plans.Data[0].Limits["records_requests_per_hour"] != float64(1000) || plans.Data[2].Limits["deep_answers"] != true {
		t.Fatalf("plan limits: %+v", plans.Data)
	}

	// Upgrade: the page's button redirects to the Checkout page stripe-mock made.
	up := alice.post(gw+"/account/upgrade", url.Values{"plan": {"pro"}, "csrf_token": {csrf}})
	if loc := up.header.Get("Location"); up.status != http.StatusSeeOther || !strings.HasPrefix(loc, "https://") {
		t.Fatalf("upgrade: %d Location %q\n%s", up.status, loc, up.body)
	}
	mustStatus(t, "upgrade to a cheaper plan", alice.post(gw+"/account/upgrade", url.Values{"plan": {"free"}, "csrf_token": {csrf}}), 400)
	if p := alice.post(gw+"/account/billing", url.Values{"csrf_token": {csrf}}); p.status != 409 || !strings.Contains(p.body, "no billing account yet") {
		t.Fatalf("Manage billing with no Stripe customer: %d", p.status)
	}
	mustStatus(t, "upgrade without CSRF token", alice.post(gw+"/account/upgrade", url.Values{"plan": {"pro"}}), 403)

	// The answer service's page (another browser: cookies ignore ports, so
	// alice's is already signed in there): the same account, no key issued
	// on sign-in.
	alice2 := newWeb(t)
	ans := signIn(t, alice2, mail, e.answer, "alice@example.com")
	if ans.status != http.StatusSeeOther || newSecret(ans) != "" {
		t.Fatalf("sign-in on the answer page: %d", ans.status)
	}
	ansPage := alice2.get(e.answer + "/account")
	if !strings.Contains(ansPage.body, "No keys yet.") || !strings.Contains(ansPage.body, "arr_ans_") {
		t.Fatalf("answer account page:\n%s", ansPage.body)
	}
	ansKey := newSecret(alice2.post(e.answer+"/account/keys", url.Values{"csrf_token": {hidden(t, ansPage, "csrf_token")}}))
	if code, _ := get(t, e.answer+"/api/v1/key", map[string]string{"Authorization": "Bearer " + ansKey}); !strings.HasPrefix(ansKey, "arr_ans_") || code != 200 {
		t.Fatalf("answer key %q minted on the page: %d", ansKey, code)
	}

	// Sign out: the session ends on the server, the cookie is cleared.
	var cookie string
	u, _ := url.Parse(gw)
	for _, c := range alice.c.Jar.Cookies(u) {
		if c.Name == "arr_session" {
			cookie = c.Value
		}
	}
	outPage := alice.get(e.answer + "/account")
	mustStatus(t, "sign-out without CSRF token", alice.post(gw+"/account/signout", url.Values{}), 403)
	out := alice.post(gw+"/account/signout", url.Values{"csrf_token": {hidden(t, outPage, "csrf_token")}})
	if out.status != http.StatusSeeOther || !strings.Contains(strings.Join(out.header.Values("Set-Cookie"), ";"), "arr_session=;") {
		t.Fatalf("sign-out: %d %v", out.status, out.header.Values("Set-Cookie"))
	}
	if code, _ := get(t, gw+"/v1/me", map[string]string{"Cookie": "arr_session=" + cookie}); code != 401 {
		t.Fatalf("GET /v1/me with the signed-out session: %d, want 401", code)
	}
	if p := alice.get(gw + out.header.Get("Location")); !strings.Contains(p.body, `id="signin-form"`) || !strings.Contains(p.body, "You are signed out.") {
		t.Fatalf("after sign-out /account:\n%s", p.body)
	}
	code, body = get(t, gw+"/v1/me", nil)
	assertAuthError(t, "gateway", code, body)
}

// TestSignInLinkInTheLogWithoutSMTP: with no SMTP_URL, arr up prints the
// link to its log, says why, and the link works.
func TestSignInLinkInTheLogWithoutSMTP(t *testing.T) {
	e := newEnv(t)
	p := e.up()
	w := newWeb(t)
	form := w.get(e.records + "/account")
	mustStatus(t, "sign-in", w.post(e.records+"/account/signin", url.Values{"email": {"dana@example.com"}, "csrf_token": {hidden(t, form, "csrf_token")}}), 200)
	// The child's log reaches us through a pipe copied by another goroutine:
	// wait for the line rather than race it.
	linkRE := regexp.MustCompile(`http://[^\s"\\]+/account/signin/verify\?link=[0-9a-f-]+&token=[A-Za-z0-9_-]+`)
	var logs, m string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if logs = p.logs.String(); linkRE.MatchString(logs) {
			break
		}
	}
	m = linkRE.FindString(logs)
	if m == "" || !strings.Contains(logs, "no SMTP server configured") || !strings.Contains(logs, "dana@example.com") {
		t.Fatalf("the log does not carry the link and the reason:\n%s", logs)
	}
	confirm := w.get(m)
	done := w.post(e.records+"/account/signin/verify", url.Values{"link": {hidden(t, confirm, "link")}, "token": {hidden(t, confirm, "token")}, "csrf_token": {hidden(t, confirm, "csrf_token")}})
	if done.status != http.StatusSeeOther {
		t.Fatalf("using the logged link: %d\n%s", done.status, done.body)
	}
	if page := w.get(e.records + "/account"); !strings.Contains(page.body, "dana@example.com") || !strings.Contains(page.body, "arr_rec_") {
		t.Fatalf("records account page after sign-up:\n%s", page.body)
	}
}
