package crawl_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/crawl"
	"github.com/arr-dev/arr/adapters/webpage"
)

// site is a loopback web site the test starts; it counts the requests for
// each path.
type site struct {
	srv   *httptest.Server
	mu    sync.Mutex
	hits  map[string]int
	pages map[string]string
}

// newSite serves pages: a path maps to an HTML body, "redirect:PATH",
// "status:N", "type:CT:BODY" or "robots:BODY" (text/plain).
func newSite(t testing.TB, pages map[string]string) *site {
	t.Helper()
	s := &site{hits: map[string]int{}, pages: pages}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		body, ok := s.pages[r.URL.Path]
		s.mu.Unlock()
		switch {
		case !ok:
			http.NotFound(w, r)
		case strings.HasPrefix(body, "redirect:"):
			http.Redirect(w, r, strings.TrimPrefix(body, "redirect:"), http.StatusFound)
		case strings.HasPrefix(body, "status:"):
			var code int
			fmt.Sscan(strings.TrimPrefix(body, "status:"), &code)
			w.WriteHeader(code)
		case strings.HasPrefix(body, "type:"):
			ct, b, _ := strings.Cut(strings.TrimPrefix(body, "type:"), ";;")
			w.Header().Set("Content-Type", ct)
			_, _ = w.Write([]byte(b))
		case strings.HasPrefix(body, "robots:"):
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte(strings.TrimPrefix(body, "robots:")))
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!doctype html><html><head><title>" + r.URL.Path + "</title></head><body>" + body + "</body></html>"))
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *site) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// links is an HTML list of links.
func links(hrefs ...string) string {
	var b strings.Builder
	for _, h := range hrefs {
		fmt.Fprintf(&b, `<p><a href="%s">%s</a></p>`, h, h)
	}
	return b.String()
}

// run crawls and returns the results by path ("/a", or the full URL for
// another site), with a bound on the whole crawl.
func run(t testing.TB, cfg crawl.Config, seeds ...string) []crawl.Result {
	t.Helper()
	c, err := crawl.New(webpage.New(webpage.Config{AllowPrivate: true, Timeout: 5 * time.Second}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []crawl.Result
	for r := range c.Crawl(ctx, seeds) {
		out = append(out, r)
	}
	return out
}

// summary is "URL outcome [reason]" per result, URLs relative to base.
func summary(base string, rs []crawl.Result) []string {
	var out []string
	for _, r := range rs {
		line := strings.TrimPrefix(r.URL, base) + " " + string(r.Outcome)
		if r.Err != nil {
			line += ": " + strings.ReplaceAll(r.Err.Error(), base, "")
		}
		out = append(out, line)
	}
	return out
}

func TestCrawlDepthAndOutcomes(t *testing.T) {
	t.Parallel()
	s := newSite(t, map[string]string{
		"/robots.txt":     "robots:User-agent: *\nDisallow: /private\n",
		"/":               links("/a", "/private/secret", "/old", "/missing", "/logo.png", "/notes.txt", "mailto:me@example.com", "javascript:void(0)", "#top"),
		"/a":              links("/a/b", "/"),
		"/a/b":            links("/a/b/c"),
		"/a/b/c":          "too deep",
		"/private/secret": "secret",
		"/old":            "redirect:/new",
		"/new":            links("/a"),
		"/logo.png":       "type:image/png;;\x89PNG",
		"/notes.txt":      "type:text/plain;;plain notes",
	})
	base := s.srv.URL
	got := summary(base, run(t, crawl.Config{Depth: 2, SameSite: true}, base))
	want := []string{
		"/ fetched",
		"/a fetched",
		"/private/secret failed: disallowed by robots.txt",
		"/old fetched",
		"/missing failed: HTTP 404",
		"/logo.png skipped: not a readable type: image/png",
		"/notes.txt fetched",
		"/a/b fetched",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("crawl:\n got %q\nwant %q", got, want)
	}
	if n := s.hit("/a/b/c"); n != 0 {
		t.Errorf("/a/b/c (depth 3) fetched %d times", n)
	}
	if n := s.hit("/private/secret"); n != 0 {
		t.Errorf("the disallowed page was fetched %d times", n)
	}
	if n := s.hit("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want once", n)
	}
}

func TestCrawlRedirectAndResultFields(t *testing.T) {
	t.Parallel()
	s := newSite(t, map[string]string{
		"/":     links("/old", "/new", "/gone"),
		"/old":  "redirect:/new",
		"/new":  "<p>the new page</p>",
		"/gone": "redirect:/nowhere",
	})
	base := s.srv.URL
	rs := run(t, crawl.Config{Depth: 1, SameSite: true}, base+"/")
	got := summary(base, rs)
	want := []string{"/ fetched", "/old fetched", "/new skipped: read already: /old redirects to it", "/gone failed: HTTP 404"}
	if !slices.Equal(got, want) {
		t.Fatalf("crawl:\n got %q\nwant %q", got, want)
	}
	r := rs[1]
	if r.FinalURL != base+"/new" || r.From != base+"/" || r.Depth != 1 || r.ContentType != "text/html" || !strings.Contains(string(r.Body), "the new page") {
		t.Errorf("redirected page: %+v", r)
	}
	var se *crawl.StatusError
	if !errors.As(rs[3].Err, &se) || se.Status != 404 {
		t.Errorf("404: %v", rs[3].Err)
	}

	// The target first, then a redirect to it; a redirect to a disallowed
	// page.
	s = newSite(t, map[string]string{
		"/robots.txt": "robots:User-agent: *\nDisallow: /closed\n",
		"/":           links("/new", "/old", "/sneaky"),
		"/old":        "redirect:/new",
		"/new":        "<p>the new page</p>",
		"/sneaky":     "redirect:/closed",
		"/closed":     "closed",
	})
	base = s.srv.URL
	got = summary(base, run(t, crawl.Config{Depth: 1, SameSite: true}, base+"/"))
	want = []string{"/ fetched", "/new fetched", "/old skipped: redirected to /new, read already", "/sneaky failed: redirected to /closed, disallowed by robots.txt"}
	if !slices.Equal(got, want) {
		t.Fatalf("crawl:\n got %q\nwant %q", got, want)
	}
	if n := s.hit("/new"); n != 2 {
		t.Errorf("/new fetched %d times, want 2 (once itself, once through /old)", n)
	}
}

// Every request is bounded by the fetcher's timeout; a slow page fails
// and the crawl goes on.
func TestCrawlTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(links("/slow", "/fast")))
	}))
	defer slow.Close()
	defer close(release)
	c, err := crawl.New(webpage.New(webpage.Config{AllowPrivate: true, Timeout: 300 * time.Millisecond}), crawl.Config{Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for r := range c.Crawl(context.Background(), []string{slow.URL}) {
		got = append(got, strings.TrimPrefix(r.URL, slow.URL)+" "+string(r.Outcome))
		if r.Outcome == crawl.Failed && !strings.Contains(r.Err.Error(), "Timeout") {
			t.Errorf("%s: %v", r.URL, r.Err)
		}
	}
	if want := []string{"/ fetched", "/slow failed", "/fast fetched"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestCrawlLimit(t *testing.T) {
	t.Parallel()
	var hrefs []string
	pages := map[string]string{}
	for i := range 50 {
		p := fmt.Sprintf("/p%d", i)
		hrefs = append(hrefs, p)
		pages[p] = links("/", p+"/child")
	}
	pages["/"] = links(hrefs...)
	s := newSite(t, pages)
	for _, limit := range []int{1, 7, 51} {
		rs := run(t, crawl.Config{Depth: 5, Limit: limit, SameSite: true}, s.srv.URL)
		if len(rs) != limit {
			t.Errorf("limit %d: %d results", limit, len(rs))
		}
		for i, r := range rs {
			if r.Pending+i+1 > limit {
				t.Errorf("limit %d: %d pending after %d results", limit, r.Pending, i+1)
			}
		}
	}
	if n := s.hit("/p0/child"); n != 0 {
		t.Errorf("breadth first: a depth-2 page was fetched before depth 1 was done (%d)", n)
	}
}

func TestCrawlSameSite(t *testing.T) {
	t.Parallel()
	other := newSite(t, map[string]string{"/": "<p>elsewhere</p>", "/there": "<p>there</p>"})
	s := newSite(t, map[string]string{
		"/":    links(other.srv.URL+"/there", "/hop"),
		"/hop": "redirect:" + other.srv.URL + "/",
	})
	rs := run(t, crawl.Config{Depth: 1, SameSite: true}, s.srv.URL)
	got := summary(s.srv.URL, rs)
	want := []string{"/ fetched", "/hop skipped: redirected to another site: " + other.srv.URL + "/"}
	if !slices.Equal(got, want) {
		t.Fatalf("same site:\n got %q\nwant %q", got, want)
	}
	if n := other.hit("/there"); n != 0 {
		t.Errorf("the other site was crawled (%d)", n)
	}
	rs = run(t, crawl.Config{Depth: 1, SameSite: false}, s.srv.URL)
	if len(rs) != 3 || rs[1].URL != other.srv.URL+"/there" || rs[2].FinalURL != other.srv.URL+"/" || rs[2].Outcome != crawl.Fetched {
		t.Fatalf("any site: %q", summary(s.srv.URL, rs))
	}
}

func TestCrawlRobots(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		robots string // "" serves no robots.txt (404)
		want   []string
	}{
		{name: "no robots.txt allows all", want: []string{"/ fetched", "/x fetched", "/arr-only fetched"}},
		{name: "group for arr", robots: "robots:User-agent: arr\nDisallow: /arr-only\n\nUser-agent: *\nDisallow: /x\n",
			want: []string{"/ fetched", "/x fetched", "/arr-only failed: disallowed by robots.txt"}},
		{name: "allow overrides a shorter disallow", robots: "robots:User-agent: *\nDisallow: /\nAllow: /$\nAllow: /x\n",
			want: []string{"/ fetched", "/x fetched", "/arr-only failed: disallowed by robots.txt"}},
		{name: "5xx fetches nothing", robots: "status:503",
			want: []string{"/ failed: robots.txt answered HTTP 503, so nothing on  is fetched"}},
		{name: "unparsable disallows all", robots: "robots:Disallow: /\n",
			want: []string{"/ failed: robots.txt does not parse, so nothing on  is fetched: Disallow before User-agent at token #2."}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pages := map[string]string{"/": links("/x", "/arr-only"), "/x": "x", "/arr-only": "a"}
			if tc.robots != "" {
				pages["/robots.txt"] = tc.robots
			}
			s := newSite(t, pages)
			got := summary(s.srv.URL, run(t, crawl.Config{Depth: 1}, s.srv.URL))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestCrawlSitemap(t *testing.T) {
	t.Parallel()
	var s *site
	s = newSite(t, map[string]string{
		"/robots.txt": "robots:User-agent: *\nDisallow: /hidden\n",
		"/index.xml": `type:application/xml;;<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>SITE/one.xml</loc></sitemap><sitemap><loc>SITE/two.xml</loc></sitemap></sitemapindex>`,
		"/one.xml": `type:text/xml;;<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc> SITE/a </loc></url><url><loc>SITE/hidden</loc></url><url><loc>http://elsewhere.invalid/x</loc></url></urlset>`,
		"/two.xml":  `type:application/octet-stream;;<urlset><url><loc>SITE/b</loc></url><url><loc>SITE/a#again</loc></url></urlset>`,
		"/feed.xml": `type:application/xml;;<rss><channel/></rss>`,
		"/a":        links("/c"),
		"/b":        "b",
		"/c":        "c",
	})
	for p, b := range s.pages {
		s.pages[p] = strings.ReplaceAll(b, "SITE", s.srv.URL)
	}
	base := s.srv.URL
	got := summary(base, run(t, crawl.Config{SameSite: true}, base+"/index.xml", base+"/feed.xml"))
	want := []string{
		"/feed.xml failed: not a sitemap: the root element is <rss>, not <urlset> or <sitemapindex>",
		"/a fetched",
		"/hidden failed: disallowed by robots.txt",
		"/b fetched",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("sitemap:\n got %q\nwant %q", got, want)
	}
	// A sitemap's URLs are seeds: --crawl follows their links, and the
	// limit holds.
	got = summary(base, run(t, crawl.Config{Depth: 1, Limit: 3, SameSite: true}, base+"/one.xml"))
	want = []string{"/a fetched", "/hidden failed: disallowed by robots.txt", "/c fetched"}
	if !slices.Equal(got, want) {
		t.Fatalf("sitemap crawl:\n got %q\nwant %q", got, want)
	}
}

func TestCrawlSeeds(t *testing.T) {
	t.Parallel()
	s := newSite(t, map[string]string{"/": "home", "/logo.png": "type:image/png;;\x89PNG", "/doc.pdf": "type:application/pdf;;%PDF"})
	base := s.srv.URL
	got := summary(base, run(t, crawl.Config{}, base+"/logo.png", base+"/doc.pdf", "ftp://example.com/x", base, base+"/#top", "HTTP://"+strings.TrimPrefix(base, "http://")+"/"))
	want := []string{
		"ftp://example.com/x failed: \"ftp://example.com/x\": not an absolute http(s) URL",
		"/logo.png failed: not a readable type: image/png",
		"/doc.pdf failed: not a readable type: application/pdf",
		"/ fetched",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("seeds:\n got %q\nwant %q", got, want)
	}
}

func TestCanonical(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, want string
	}{
		{name: "fragment dropped", in: "http://example.com/a#b", want: "http://example.com/a"},
		{name: "empty path", in: "http://example.com", want: "http://example.com/"},
		{name: "case", in: "HTTPS://Example.COM/Path", want: "https://example.com/Path"},
		{name: "default http port", in: "http://example.com:80/x", want: "http://example.com/x"},
		{name: "default https port", in: "https://example.com:443/x", want: "https://example.com/x"},
		{name: "other port kept", in: "http://127.0.0.1:8080/x", want: "http://127.0.0.1:8080/x"},
		{name: "dot segments", in: "http://example.com/a/./b/../c", want: "http://example.com/a/c"},
		{name: "query kept", in: "http://example.com/s?q=1&a=2#x", want: "http://example.com/s?q=1&a=2"},
		{name: "ipv6", in: "http://[::1]:8080/", want: "http://[::1]:8080/"},
		{name: "ipv6 default port", in: "http://[::1]:80/", want: "http://[::1]/"},
		{name: "mailto", in: "mailto:me@example.com"},
		{name: "javascript", in: "javascript:void(0)"},
		{name: "relative", in: "/a"},
		{name: "no host", in: "http:///a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := crawl.Canonical(tc.in)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("Canonical(%q) = %q, want an error", tc.in, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestLinks(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("http://example.com/dir/page.html")
	cases := []struct {
		name string
		body string
		want []string
	}{
		{name: "relative and absolute", body: links("a", "/b", "../c", "http://other.example/d", "//proto.example/e"),
			want: []string{"http://example.com/dir/a", "http://example.com/b", "http://example.com/c", "http://other.example/d", "http://proto.example/e"}},
		{name: "fragments and duplicates", body: links("a#x", "a#y", "a", "#top", ""),
			want: []string{"http://example.com/dir/a", "http://example.com/dir/page.html"}},
		{name: "other schemes left out", body: links("mailto:me@example.com", "javascript:alert(1)", "tel:123", "data:text/plain,x", "ftp://example.com/f"),
			want: nil},
		{name: "base href", body: `<head><base href="http://example.com/root/"></head>` + links("x"),
			want: []string{"http://example.com/root/x"}},
		{name: "area and entities", body: `<map><area href="/m?a=1&amp;b=2"></map><a name="no-href">x</a>`,
			want: []string{"http://example.com/m?a=1&b=2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := crawl.Links(base, []byte(tc.body)); !slices.Equal(got, tc.want) {
				t.Fatalf("Links:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	if _, err := crawl.New(nil, crawl.Config{}); err == nil {
		t.Error("nil getter accepted")
	}
	_, err := crawl.New(webpage.New(webpage.Config{}), crawl.Config{Depth: -1, Limit: -2})
	if err == nil || !strings.Contains(err.Error(), "depth") || !strings.Contains(err.Error(), "limit") {
		t.Errorf("Validate: %v", err)
	}
}
