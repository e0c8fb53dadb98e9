package crawl

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// errNotHTTP: not an absolute http(s) URL.
var errNotHTTP = errors.New("not an absolute http(s) URL")

// Canonical is the form the crawler compares URLs in: an absolute http or
// https URL with scheme and host in lower case, no default port (80, 443),
// no fragment, dot segments removed and an empty path made "/". The query
// is kept as it is.
func Canonical(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("%q: %w", raw, err)
	}
	return canonical(u)
}

func canonical(u *url.URL) (string, error) {
	// Resolving an absolute reference against nothing removes its dot
	// segments and copies it.
	c := (&url.URL{}).ResolveReference(u)
	c.Scheme = strings.ToLower(c.Scheme)
	if (c.Scheme != "http" && c.Scheme != "https") || c.Host == "" || c.Opaque != "" {
		return "", fmt.Errorf("%q: %w", u.String(), errNotHTTP)
	}
	host, port := strings.ToLower(c.Hostname()), c.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" && !(c.Scheme == "http" && port == "80") && !(c.Scheme == "https" && port == "443") {
		host = net.JoinHostPort(strings.Trim(host, "[]"), port)
	}
	c.Host = host
	c.Fragment, c.RawFragment = "", ""
	if c.Path == "" {
		c.Path, c.RawPath = "/", ""
	}
	return c.String(), nil
}

// Site is a canonical URL's scheme, host and port, e.g.
// "https://example.com" or "http://127.0.0.1:8080".
func Site(canonicalURL string) string {
	u, err := url.Parse(canonicalURL)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// Links returns the canonical http(s) targets of the a[href] and
// area[href] elements of an HTML page read from base (or from its <base
// href>), each once, in document order. Fragments are dropped; mailto:,
// javascript: and other schemes are left out.
func Links(base *url.URL, body []byte) []string {
	var out []string
	seen := map[string]bool{}
	baseSet := false
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out // io.EOF or a malformed page: what was read so far
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		tag := string(name)
		if !hasAttr || (tag != "a" && tag != "area" && tag != "base") {
			continue
		}
		href, ok := attr(z, "href")
		if !ok {
			continue
		}
		ref, err := url.Parse(strings.TrimSpace(href))
		if err != nil {
			continue
		}
		if tag == "base" {
			if !baseSet {
				baseSet = true
				base = base.ResolveReference(ref)
			}
			continue
		}
		u, err := canonical(base.ResolveReference(ref))
		if err != nil || seen[u] {
			continue
		}
		seen[u] = true
		out = append(out, u)
	}
}

// attr is the value of the current tag's attribute key.
func attr(z *html.Tokenizer, key string) (string, bool) {
	for {
		k, v, more := z.TagAttr()
		if string(k) == key {
			return string(v), true
		}
		if !more {
			return "", false
		}
	}
}
