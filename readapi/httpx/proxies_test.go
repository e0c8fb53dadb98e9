package httpx_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/readapi/httpx"
)

func TestParseTrustedProxies(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{name: "empty trusts nobody", in: "", want: nil},
		{name: "blank trusts nobody", in: "  ", want: nil},
		{name: "one IPv4 address", in: "127.0.0.1", want: []string{"127.0.0.1/32"}},
		{name: "addresses and prefixes with spaces", in: " 10.0.0.0/8 , 192.0.2.7,::1, 2001:db8::/32", want: []string{"10.0.0.0/8", "192.0.2.7/32", "::1/128", "2001:db8::/32"}},
		{name: "an IPv4-mapped address is IPv4", in: "::ffff:192.0.2.7", want: []string{"192.0.2.7/32"}},
		{name: "an IPv4-mapped prefix is IPv4", in: "::ffff:10.0.0.0/104", want: []string{"10.0.0.0/8"}},
		{name: "a host name", in: "proxy.internal", wantErr: `"proxy.internal" is not an IP address`},
		{name: "host bits set", in: "10.0.0.1/8", wantErr: "did you mean 10.0.0.0/8"},
		{name: "prefix too long", in: "10.0.0.0/33", wantErr: "not a CIDR prefix"},
		{name: "trailing comma", in: "127.0.0.1,", wantErr: "empty entry"},
		{name: "double comma", in: "127.0.0.1,,10.0.0.1", wantErr: "empty entry"},
		{name: "zone", in: "fe80::1%eth0", wantErr: "zoned"},
		{name: "one bad entry among good ones", in: "127.0.0.1, 300.1.1.1", wantErr: `"300.1.1.1"`},
		{name: "port", in: "127.0.0.1:8080", wantErr: `"127.0.0.1:8080"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := httpx.ParseTrustedProxies(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseTrustedProxies(%q) error %v, want one containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTrustedProxies(%q): %v", tc.in, err)
			}
			var s []string
			for _, p := range got {
				s = append(s, p.String())
			}
			if strings.Join(s, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("ParseTrustedProxies(%q) = %v, want %v", tc.in, s, tc.want)
			}
		})
	}
}

// seen is what the test route reports of a request.
type seen struct {
	ClientIP string `json:"client_ip"`
	TLS      bool   `json:"tls"`
	Host     string `json:"host"`
	Trusted  bool   `json:"trusted"`
}

// probeEngine is a service engine with one route that reports what the
// request looks like, and one link-building route behind RequireSiteHost.
func probeEngine(t *testing.T, trusted string, site httpx.Site) http.Handler {
	t.Helper()
	gin.SetMode(gin.TestMode)
	proxies, err := httpx.ParseTrustedProxies(trusted)
	if err != nil {
		t.Fatal(err)
	}
	fail := func(c *gin.Context, err error) {
		p := httpx.ProblemOf(err)
		c.AbortWithStatusJSON(p.Status, gin.H{"error": gin.H{"status": p.Status, "code": p.Code, "message": p.Message}})
	}
	e, err := httpx.NewEngine(httpx.Base{Service: "probe", OpenAPI: []byte(`{}`), Fail: fail, TrustedProxies: proxies,
		Health: func(context.Context) (int, any) { return http.StatusOK, nil }})
	if err != nil {
		t.Fatal(err)
	}
	e.GET("/probe", func(c *gin.Context) {
		c.JSON(http.StatusOK, seen{ClientIP: c.ClientIP(), TLS: httpx.IsTLS(c), Host: httpx.RequestHost(c), Trusted: httpx.ViaTrustedProxy(c)})
	})
	e.POST("/link", httpx.RequireSiteHost(site, fail), func(c *gin.Context) {
		c.String(http.StatusOK, site.BaseURL()+"/account")
	})
	return e
}

var forged = map[string]string{
	"X-Forwarded-For": "203.0.113.50", "X-Real-IP": "203.0.113.51",
	"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example",
	"CF-Connecting-IP": "203.0.113.52", "X-Appengine-Remote-Addr": "203.0.113.53",
}

func TestForwardingHeadersOnlyFromTrustedProxies(t *testing.T) {
	tests := []struct {
		name    string
		trusted string
		remote  string
		headers map[string]string
		want    seen
	}{
		{name: "nobody trusted: forged headers ignored", trusted: "", remote: "127.0.0.1:5000", headers: forged,
			want: seen{ClientIP: "127.0.0.1", Host: "127.0.0.1:8081"}},
		{name: "an untrusted peer's headers ignored", trusted: "10.0.0.0/8", remote: "192.0.2.9:5000", headers: forged,
			want: seen{ClientIP: "192.0.2.9", Host: "127.0.0.1:8081"}},
		{name: "a trusted proxy is believed", trusted: "127.0.0.1", remote: "127.0.0.1:5000", headers: forged,
			want: seen{ClientIP: "203.0.113.50", TLS: true, Host: "evil.example", Trusted: true}},
		{name: "a trusted proxy in a prefix", trusted: "10.0.0.0/8", remote: "10.1.2.3:5000", headers: map[string]string{"X-Forwarded-For": "198.51.100.7", "X-Forwarded-Proto": "HTTPS"},
			want: seen{ClientIP: "198.51.100.7", TLS: true, Host: "127.0.0.1:8081", Trusted: true}},
		{name: "a trusted IPv6 proxy", trusted: "::1", remote: "[::1]:5000", headers: map[string]string{"X-Real-IP": "2001:db8::9"},
			want: seen{ClientIP: "2001:db8::9", Host: "127.0.0.1:8081", Trusted: true}},
		{name: "a client's own X-Forwarded-For entry before the proxy's is skipped", trusted: "10.0.0.0/8", remote: "10.0.0.2:5000",
			headers: map[string]string{"X-Forwarded-For": "1.1.1.1, 198.51.100.8", "X-Forwarded-Proto": "https, http"},
			want:    seen{ClientIP: "198.51.100.8", Host: "127.0.0.1:8081", Trusted: true}},
		{name: "a trusted proxy without headers", trusted: "127.0.0.1", remote: "127.0.0.1:5000",
			want: seen{ClientIP: "127.0.0.1", Host: "127.0.0.1:8081", Trusted: true}},
	}
	site, err := httpx.NewSite("http://127.0.0.1:8081", "127.0.0.1:8081")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := probeEngine(t, tc.trusted, site)
			req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8081/probe", nil)
			req.RemoteAddr = tc.remote
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var got seen
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
				t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
			}
			if got != tc.want {
				t.Fatalf("saw %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRequireSiteHost(t *testing.T) {
	site, err := httpx.NewSite("https://gateway.arr.example", "127.0.0.1:8082")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		trusted string
		remote  string
		host    string
		headers map[string]string
		site    httpx.Site
		want    int
	}{
		{name: "the public name", remote: "127.0.0.1:5000", host: "gateway.arr.example", site: site, want: 200},
		{name: "the listen address (a proxy that passes its upstream as Host)", remote: "127.0.0.1:5000", host: "127.0.0.1:8082", site: site, want: 200},
		{name: "another host", remote: "127.0.0.1:5000", host: "evil.example", site: site, want: 421},
		{name: "another port", remote: "127.0.0.1:5000", host: "gateway.arr.example:8443", site: site, want: 421},
		{name: "X-Forwarded-Host from an untrusted peer is ignored", remote: "192.0.2.9:5000", host: "evil.example",
			headers: map[string]string{"X-Forwarded-Host": "gateway.arr.example"}, site: site, want: 421},
		{name: "X-Forwarded-Host of a trusted proxy is the host", trusted: "127.0.0.1", remote: "127.0.0.1:5000", host: "127.0.0.1:8082",
			headers: map[string]string{"X-Forwarded-Host": "evil.example"}, site: site, want: 421},
		{name: "a trusted proxy forwarding the public name", trusted: "127.0.0.1", remote: "127.0.0.1:5000", host: "127.0.0.1:8082",
			headers: map[string]string{"X-Forwarded-Host": "gateway.arr.example"}, site: site, want: 200},
		{name: "no site configured builds no link", remote: "127.0.0.1:5000", host: "127.0.0.1:8082", want: 500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := probeEngine(t, tc.trusted, tc.site)
			req := httptest.NewRequest(http.MethodPost, "/link", nil)
			req.Host, req.RemoteAddr = tc.host, tc.remote
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
			body := rec.Body.String()
			switch tc.want {
			case 200:
				if body != "https://gateway.arr.example/account" {
					t.Fatalf("link %q", body)
				}
			case 421:
				var e struct {
					Error struct{ Code, Message string } `json:"error"`
				}
				if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Code != "misdirected_request" ||
					!strings.Contains(e.Error.Message, "https://gateway.arr.example/account") || strings.Contains(body, "evil.example") {
					t.Fatalf("421 body %s: want misdirected_request naming the public address and not the forged host", body)
				}
			}
		})
	}
}
