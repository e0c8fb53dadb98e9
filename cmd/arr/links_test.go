package main_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/mail/mailtest"
)

// Every request in these tests goes to the arr the test started on
// 127.0.0.1; forged Host and X-Forwarded-* headers only say otherwise.

// forge sends req with a forged Host header and extra headers through w
// (its cookie jar keys on the URL, 127.0.0.1, not on the Host header).
func (w *web) forge(method, u, host string, headers map[string]string, form url.Values) page {
	w.t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if host != "" {
		req.Host = host
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return w.do(req)
}

// noMail fails when a message is waiting: mail is sent before the response,
// so a refused request that sent one would have left it here.
func noMail(t *testing.T, mail *mailtest.Server, what string) {
	t.Helper()
	if got := mail.Pending(); len(got) != 0 {
		t.Fatalf("%s sent %d mail(s); the first:\n%s", what, len(got), got[0].Text)
	}
}

// cookie returns a Set-Cookie of the response by name.
func cookie(p page, name string) *http.Cookie {
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestSignInLinksIgnoreRequestHeaders: with ARR_PUBLIC_BASE_URL and
// ARR_TRUSTED_PROXIES unset, links point at each service's listen address
// whatever the request says. A sign-in (or checkout) asked for under
// another Host is 421 and sends nothing; X-Forwarded-* from an untrusted
// peer changes neither the link, nor the cookies' Secure flag, nor the
// client IP that per-IP limits count.
func TestSignInLinksIgnoreRequestHeaders(t *testing.T) {
	mail := mailtest.Start(t, mailtest.Options{})
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "SMTP_URL="+mail.URL, "ARR_PUBLIC_RATE_LIMIT=3", "ARR_LOG_LEVEL=info")
	proc := e.up()
	// One line at start says where links point, per service.
	want := "answer=" + e.answer + " gateway=" + e.gateway + " records=" + e.records
	if logs := proc.logs.String(); !strings.Contains(logs, "ARR_PUBLIC_BASE_URL is unset") || !strings.Contains(logs, want) {
		t.Fatalf("no start-up line naming the link base URLs %q:\n%s", want, logs)
	}
	forwarded := map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example",
		"X-Forwarded-For": "203.0.113.7", "X-Real-IP": "203.0.113.8"}

	for _, svc := range []string{"answer", "gateway", "records"} {
		t.Run(svc, func(t *testing.T) {
			base := e.base(svc)
			w := newWeb(t)
			form := w.get(base + "/account")
			mustStatus(t, "GET /account", form, 200)
			csrf := hidden(t, form, "csrf_token")
			fields := url.Values{"email": {"victim-" + svc + "@example.com"}, "csrf_token": {csrf}}

			for _, host := range []string{"evil.example", "evil.example" + strings.TrimPrefix(base, "http://127.0.0.1"), "localhost.evil.example"} {
				p := w.forge(http.MethodPost, base+"/account/signin", host, nil, fields)
				mustStatus(t, "sign-in with Host: "+host, p, http.StatusMisdirectedRequest)
				if !strings.Contains(p.header.Get("Content-Type"), "text/html") || !strings.Contains(p.body, "Wrong address") ||
					!strings.Contains(p.body, base+"/account") || strings.Contains(p.body, "evil.example") {
					t.Fatalf("the 421 page should be the account error page naming %s/account, and not the forged host:\n%s", base, p.body)
				}
				noMail(t, mail, "a sign-in with Host: "+host)
			}

			p := w.forge(http.MethodPost, base+"/account/signin", "", forwarded, fields)
			mustStatus(t, "sign-in with X-Forwarded-* from an untrusted peer", p, 200)
			if link := mail.Next(t).Link(t, "/account/signin/verify"); !strings.HasPrefix(link, base+"/account/signin/verify?") {
				t.Fatalf("the mailed link %q does not start with the default base URL %s", link, base)
			}
			fresh := newWeb(t).forge(http.MethodGet, base+"/account", "", forwarded, nil)
			if c := cookie(fresh, "arr_form"); c == nil || c.Secure {
				t.Fatalf("form cookie %+v: an untrusted X-Forwarded-Proto must not make it Secure", c)
			}
		})
	}

	// A normal sign-in still works, and its session cookie is not Secure
	// over plain HTTP.
	w := newWeb(t)
	done := signIn(t, w, mail, e.gateway, "normal@example.com")
	mustStatus(t, "confirming a normal sign-in", done, 200)
	if c := cookie(done, "arr_session"); c == nil || c.Secure || !c.HttpOnly {
		t.Fatalf("session cookie %+v: want HttpOnly, not Secure over plain HTTP", c)
	}

	// The JSON billing routes answer 421 in the gateway's error shape,
	// before anything else (no Stripe is configured here).
	p := w.forge(http.MethodPost, e.gateway+"/v1/checkout/session", "evil.example", map[string]string{"Content-Type": "application/json"}, nil)
	if p.status != http.StatusMisdirectedRequest || !strings.Contains(p.body, `"code":"misdirected_request"`) ||
		!strings.Contains(p.body, `"type":"invalid_request_error"`) || !strings.Contains(p.body, e.gateway+"/account") {
		t.Fatalf("checkout with Host: evil.example: %d %s", p.status, p.body)
	}

	// The per-IP limit (3 here) counts the TCP peer: forged X-Forwarded-For
	// addresses do not buy fresh buckets, so a fourth request is refused
	// at the latest (arr's own seeding of the answer index may have used
	// some of 127.0.0.1's).
	var last page
	for _, ip := range []string{"198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4"} {
		last = w.forge(http.MethodGet, e.records+"/openapi.json", "", map[string]string{"X-Forwarded-For": ip, "X-Real-IP": ip}, nil)
	}
	if last.status != http.StatusTooManyRequests || !strings.Contains(last.body, "ip_rate_limit_reached") {
		t.Fatalf("a fourth public request under forged X-Forwarded-For addresses: %d %s, want 429 ip_rate_limit_reached", last.status, last.body)
	}
}

// proxy is a reverse proxy on 127.0.0.1 as arr sees one: it sends the
// public Host and X-Forwarded-* headers with every request and carries the
// cookies by hand, since a cookie jar keeps Secure cookies from plain HTTP.
type proxy struct {
	t       *testing.T
	host    string
	headers map[string]string
	cookies map[string]string
	c       *http.Client
}

func newProxy(t *testing.T, host string, headers map[string]string) *proxy {
	return &proxy{t: t, host: host, headers: headers, cookies: map[string]string{},
		c: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (p *proxy) do(method, u string, form url.Values) page {
	p.t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Host = p.host
	for k, v := range p.headers {
		req.Header.Set(k, v)
	}
	for k, v := range p.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := p.c.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, c := range resp.Cookies() {
		p.cookies[c.Name] = c.Value
	}
	return page{status: resp.StatusCode, body: string(b), header: resp.Header}
}

// TestTrustedProxyAndPublicBaseURL: behind a trusted proxy
// (ARR_TRUSTED_PROXIES=127.0.0.1) with ARR_PUBLIC_BASE_URL set, the mailed
// link starts with the service's public base URL, X-Forwarded-Proto: https
// makes the cookies Secure, an X-Forwarded-Host that is not a public host
// is 421, and each forwarded client IP has its own per-IP bucket.
func TestTrustedProxyAndPublicBaseURL(t *testing.T) {
	mail := mailtest.Start(t, mailtest.Options{})
	e := newEnv(t)
	e.extraEnv = append(e.extraEnv, "SMTP_URL="+mail.URL, "ARR_TRUSTED_PROXIES=127.0.0.1, ::1",
		"ARR_PUBLIC_BASE_URL=https://{service}.arr.test", "ARR_PUBLIC_RATE_LIMIT=2")
	e.up()

	px := newProxy(t, "gateway.arr.test", map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.20"})
	form := px.do(http.MethodGet, e.gateway+"/account", nil)
	mustStatus(t, "GET /account through the proxy", form, 200)
	if c := cookie(form, "arr_form"); c == nil || !c.Secure {
		t.Fatalf("form cookie %+v: want Secure behind a trusted proxy that says https", c)
	}
	csrf := hidden(t, form, "csrf_token")
	sent := px.do(http.MethodPost, e.gateway+"/account/signin", url.Values{"email": {"proxied@example.com"}, "csrf_token": {csrf}})
	mustStatus(t, "sign-in through the proxy", sent, 200)
	link := mail.Next(t).Link(t, "/account/signin/verify")
	if !strings.HasPrefix(link, "https://gateway.arr.test/account/signin/verify?") {
		t.Fatalf("the mailed link %q does not start with the gateway's ARR_PUBLIC_BASE_URL", link)
	}
	// The link names the public host; the proxy delivers it to arr.
	lu, _ := url.Parse(link)
	confirm := px.do(http.MethodGet, e.gateway+lu.RequestURI(), nil)
	mustStatus(t, "the mailed link through the proxy", confirm, 200)
	done := px.do(http.MethodPost, e.gateway+"/account/signin/verify", url.Values{
		"link": {hidden(t, confirm, "link")}, "token": {hidden(t, confirm, "token")}, "csrf_token": {hidden(t, confirm, "csrf_token")}})
	mustStatus(t, "confirming through the proxy", done, 200)
	if c := cookie(done, "arr_session"); c == nil || !c.Secure || !c.HttpOnly {
		t.Fatalf("session cookie %+v: want Secure and HttpOnly behind a trusted proxy that says https", c)
	}

	// Each service links to its own public name, and the listen address
	// (what a proxy sends as Host by default) still works.
	rp := newProxy(t, strings.TrimPrefix(e.records, "http://"), map[string]string{"X-Forwarded-Proto": "https"})
	form = rp.do(http.MethodGet, e.records+"/account", nil)
	mustStatus(t, "records /account", form, 200)
	mustStatus(t, "records sign-in", rp.do(http.MethodPost, e.records+"/account/signin", url.Values{"email": {"proxied@example.com"}, "csrf_token": {hidden(t, form, "csrf_token")}}), 200)
	if link := mail.Next(t).Link(t, "/account/signin/verify"); !strings.HasPrefix(link, "https://records.arr.test/account/signin/verify?") {
		t.Fatalf("the records link %q does not start with https://records.arr.test", link)
	}

	// A trusted proxy that forwards another host gets no link.
	for _, host := range []string{"evil.example", "gateway.arr.test:8443", "records.arr.test"} {
		ep := newProxy(t, "gateway.arr.test", map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": host})
		form := ep.do(http.MethodGet, e.gateway+"/account", nil)
		p := ep.do(http.MethodPost, e.gateway+"/account/signin", url.Values{"email": {"proxied@example.com"}, "csrf_token": {hidden(t, form, "csrf_token")}})
		mustStatus(t, "sign-in forwarded for "+host, p, http.StatusMisdirectedRequest)
		if !strings.Contains(p.body, "https://gateway.arr.test/account") {
			t.Fatalf("the 421 page does not name the public address:\n%s", p.body)
		}
		noMail(t, mail, "a sign-in forwarded for "+host)
	}

	// The per-IP limit counts the forwarded client, each in its own bucket.
	w := newWeb(t)
	for _, ip := range []string{"198.51.100.31", "198.51.100.32", "198.51.100.33"} {
		for i := 1; i <= 3; i++ {
			p := w.forge(http.MethodGet, e.records+"/openapi.json", "", map[string]string{"X-Forwarded-For": ip}, nil)
			if want := map[bool]int{true: 200, false: 429}[i <= 2]; p.status != want {
				t.Fatalf("request %d forwarded for %s: %d, want %d", i, ip, p.status, want)
			}
		}
	}
}

// TestTrustedProxiesMustParse: a bad ARR_TRUSTED_PROXIES entry stops arr
// with exit 2 and a message naming the variable and the value.
func TestTrustedProxiesMustParse(t *testing.T) {
	tests := []struct {
		name, value, mention string
	}{
		{name: "host bits set", value: "10.0.0.1/8", mention: "10.0.0.0/8"},
		{name: "a host name", value: "127.0.0.1,proxy.internal", mention: "proxy.internal"},
		{name: "an empty entry", value: "127.0.0.1,", mention: "empty entry"},
	}
	e := newEnv(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.extraEnv = []string{"ARR_TRUSTED_PROXIES=" + tc.value}
			_, stderr, code := e.arr("up")
			if code != 2 || !strings.Contains(stderr, "ARR_TRUSTED_PROXIES") || !strings.Contains(stderr, tc.value) || !strings.Contains(stderr, tc.mention) {
				t.Fatalf("arr up with ARR_TRUSTED_PROXIES=%q: exit %d, stderr %q; want exit 2 naming the variable, the value and %q", tc.value, code, stderr, tc.mention)
			}
		})
	}
}
