package webpage_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/netguard"
	"github.com/arr-dev/arr/adapters/webpage"
)

const article = `<!doctype html><html><head><title>How tides work - Ocean Facts</title></head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/shop">Shop our merchandise</a></li><li><a href="/login">Log in</a></li></ul></nav>
<div class="sidebar"><h3>Subscribe</h3><p>Get our newsletter every week! Cookie settings.</p></div>
<article><h1>How tides work</h1>
<p>Tides are the regular rise and fall of the sea surface. They are caused mainly by the gravitational pull of the Moon on the Earth's oceans, with a smaller contribution from the Sun.</p>
<p>Most coasts see two high tides and two low tides every lunar day of about 24 hours and 50 minutes. When the Sun and the Moon line up, their pulls add and produce spring tides with the largest range.</p>
<p>When they pull at right angles, the range is smallest: these are neap tides. Local geography, such as the shape of a bay, can amplify the range greatly, as in the Bay of Fundy.</p>
</article>
<footer><p>Copyright 2024 Ocean Facts. All rights reserved. Privacy policy. Terms of use.</p></footer>
</body></html>`

func TestFetchExtractDropsBoilerplate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/tides":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(article))
		case "/pdf":
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = w.Write([]byte("%PDF-1.4"))
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte(strings.Repeat("a", 5000)))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()

	f := webpage.New(webpage.Config{AllowPrivate: true, MaxBytes: 4096})
	raw, err := f.Fetch(ctx, srv.URL+"/tides")
	if err != nil {
		t.Fatal(err)
	}
	p, err := webpage.Extract(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Text, "gravitational pull of the Moon") || !strings.Contains(p.Text, "neap tides") {
		t.Fatalf("article text missing: %q", p.Text)
	}
	for _, junk := range []string{"Shop our merchandise", "newsletter", "All rights reserved"} {
		if strings.Contains(p.Text, junk) {
			t.Errorf("boilerplate %q kept: %q", junk, p.Text)
		}
	}
	if !strings.Contains(p.Title, "How tides work") {
		t.Errorf("title %q", p.Title)
	}
	if _, err := f.Fetch(ctx, srv.URL+"/pdf"); !errors.Is(err, webpage.ErrRefused) {
		t.Errorf("pdf: %v", err)
	}
	if _, err := f.Fetch(ctx, srv.URL+"/missing"); !errors.Is(err, webpage.ErrRefused) {
		t.Errorf("404: %v", err)
	}
	big, err := f.Fetch(ctx, srv.URL+"/big")
	if err != nil || len(big.Body) != 4096 || !big.Truncated {
		t.Errorf("size limit: %d %v %v", len(big.Body), big.Truncated, err)
	}
	if _, err := f.Fetch(ctx, "file:///etc/passwd"); !errors.Is(err, webpage.ErrRefused) {
		t.Errorf("file scheme: %v", err)
	}
	// The default refuses loopback after resolution.
	strict := webpage.New(webpage.Config{})
	if _, err := strict.Fetch(ctx, srv.URL+"/tides"); !errors.Is(err, webpage.ErrRefused) {
		t.Errorf("loopback without AllowPrivate: %v", err)
	}
}

// The guard refuses the loopback test server before connecting; every
// URL here is on loopback, and nothing else is dialled.
func TestFetchRefusesNonPublic(t *testing.T) {
	t.Parallel()
	hits := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits <- struct{}{}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("hello"))
	}))
	defer srv.Close()
	noInterfaces := func() ([]netip.Addr, error) { return nil, nil }
	guard := netguard.New(netguard.Config{InterfaceAddrs: noInterfaces})
	cases := []struct {
		name string
		cfg  webpage.Config
		url  string
		want string // a part of the refusal; "" when the fetch succeeds
	}{
		{name: "default guard", cfg: webpage.Config{}, url: srv.URL, want: "loopback (RFC 1122)"},
		{name: "injected guard", cfg: webpage.Config{Guard: guard}, url: srv.URL, want: "loopback"},
		{name: "names the escape hatch", cfg: webpage.Config{Guard: guard}, url: srv.URL, want: "ARR_ANSWER_FETCH_PRIVATE=allow"},
		{name: "IPv4-mapped literal", cfg: webpage.Config{Guard: guard}, url: strings.Replace(srv.URL, "127.0.0.1", "[::ffff:127.0.0.1]", 1), want: "loopback"},
		{name: "AllowPrivate turns the guard off", cfg: webpage.Config{AllowPrivate: true, Guard: guard}, url: srv.URL},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := webpage.New(tc.cfg).Fetch(context.Background(), tc.url)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Fetch(%s) = %v, want the page", tc.url, err)
				}
				return
			}
			if !errors.Is(err, webpage.ErrRefused) || !errors.Is(err, netguard.ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fetch(%s) = %v, want a refusal naming %q", tc.url, err, tc.want)
			}
		})
	}
	if n := len(hits); n != 1 {
		t.Errorf("the loopback server answered %d requests, want 1 (the AllowPrivate one)", n)
	}
}

// Get returns any status and content type, and reads only the bodies its
// caller asks for.
func TestGet(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/old":
			http.Redirect(w, r, "/sitemap.xml", http.StatusMovedPermanently)
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "Application/XML; charset=utf-8")
			_, _ = w.Write([]byte("<urlset/>"))
		case "/logo.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte("\x89PNG"))
		default:
			http.Error(w, "gone", http.StatusGone)
		}
	}))
	defer srv.Close()
	f := webpage.New(webpage.Config{AllowPrivate: true})
	ctx := context.Background()
	cases := []struct {
		name, path string
		want       func(string) bool
		status     int
		ct, body   string
		final      string
	}{
		{name: "redirect followed, body read", path: "/old", status: 200, ct: "application/xml", body: "<urlset/>", final: "/sitemap.xml"},
		{name: "body not wanted", path: "/logo.png", want: webpage.Readable, status: 200, ct: "image/png", final: "/logo.png"},
		{name: "any type wanted", path: "/logo.png", status: 200, ct: "image/png", body: "\x89PNG", final: "/logo.png"},
		{name: "error status, no body", path: "/missing", status: 410, ct: "text/plain", final: "/missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := f.Get(ctx, srv.URL+tc.path, tc.want)
			if err != nil || r.Status != tc.status || r.ContentType != tc.ct || string(r.Body) != tc.body || r.URL != srv.URL+tc.final {
				t.Fatalf("Get(%s) = %+v, %v", tc.path, r, err)
			}
		})
	}
}
