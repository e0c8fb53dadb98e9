package httpx

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/arr-dev/arr/domain"
)

// Site is where one service is reached from outside: the base URL of every
// absolute link it builds (sign-in mail, Stripe's return URLs) and the
// hosts a request may name to be given such a link. Links never come from
// request headers. The zero Site builds no links. Safe for concurrent use.
type Site struct {
	base  string
	hosts []string // canonical (see canonicalHost), sorted
}

// NewSite returns the site whose links start with baseURL (an absolute
// http(s) URL without query or fragment; a trailing slash is dropped). It
// answers to the host of baseURL and to each listen address (host:port, as
// the service listens): a loopback or unspecified listen host also admits
// 127.0.0.1, [::1] and localhost on that port, which is how a proxy on the
// same machine or a local browser reaches it.
func NewSite(baseURL string, listen ...string) (Site, error) {
	if i := strings.IndexFunc(baseURL, func(r rune) bool { return r <= ' ' || r > '~' }); i >= 0 {
		// Links are written into mail, pages and the terminal: only
		// printable ASCII, so none carries a control or bidi character.
		return Site{}, fmt.Errorf("public base URL %q: want printable ASCII only (an international host name in its xn-- form, a path percent-encoded); found %U",
			baseURL, []rune(baseURL[i:])[0])
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return Site{}, fmt.Errorf("public base URL %q: want an absolute http(s) URL without user, query or fragment", baseURL)
	}
	s := Site{base: strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/")}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	s.add(u.Hostname(), port, u.Scheme)
	for _, a := range listen {
		host, port, err := net.SplitHostPort(a)
		if err != nil || port == "" {
			return Site{}, fmt.Errorf("listen address %q: want host:port: %w", a, err)
		}
		ip := net.ParseIP(host)
		switch {
		case host == "" || ip != nil && (ip.IsUnspecified() || ip.IsLoopback()) || strings.EqualFold(host, "localhost"):
			for _, h := range []string{host, "127.0.0.1", "::1", "localhost"} {
				s.add(h, port, "http")
			}
		default:
			s.add(host, port, "http")
		}
	}
	slices.Sort(s.hosts)
	s.hosts = slices.Compact(s.hosts)
	return s, nil
}

// add admits host:port, and the bare host when port is scheme's default.
func (s *Site) add(host, port, scheme string) {
	if host == "" {
		return
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return // nobody sends Host: 0.0.0.0
	}
	s.hosts = append(s.hosts, canonicalHost(net.JoinHostPort(host, port)))
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		s.hosts = append(s.hosts, canonicalHost(host))
	}
}

// canonicalHost lowercases a Host value and drops a trailing dot of the
// name and the brackets of a bare IPv6 address, so equal names compare
// equal.
func canonicalHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, port, err := net.SplitHostPort(h); err == nil {
		return net.JoinHostPort(strings.TrimSuffix(host, "."), port)
	}
	return strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), ".")
}

// BaseURL is the base of the site's links, without a trailing slash; ""
// for the zero Site.
func (s Site) BaseURL() string { return s.base }

// Hosts are the Host values the site answers to, canonical and sorted.
func (s Site) Hosts() []string { return slices.Clone(s.hosts) }

// Allows reports whether a request naming host (a Host header value) may be
// given the site's links. Names compare case-insensitively; a host without
// a port matches only where the base URL's scheme makes that port implicit.
func (s Site) Allows(host string) bool {
	if host == "" {
		return false
	}
	_, found := slices.BinarySearch(s.hosts, canonicalHost(host))
	return found
}

// ErrMisdirected is the kind of a 421 Misdirected Request: a request that
// would be given a link arrived under a host name the service does not
// answer to as its public address.
var ErrMisdirected = misdirected{}

type misdirected struct{}

func (misdirected) Error() string { return "misdirected request" }

// errNoSite is a wiring error: a server that builds links was given no Site.
var errNoSite = errors.New("httpx: the service has no public base URL, so it builds no links")

// RequireSiteHost refuses, through fail, a request whose host (RequestHost)
// the site does not answer to: 421 Misdirected Request with a message
// naming the address to use. It guards every route that builds a link, so
// no link is made for, and no mail sent on behalf of, a request that named
// another host. With the zero Site every request is refused (500: wiring).
func RequireSiteHost(s Site, fail func(*gin.Context, error)) gin.HandlerFunc {
	return Handle(fail, func(c *gin.Context) error {
		if s.base == "" {
			return errNoSite
		}
		if !s.Allows(RequestHost(c)) {
			return &domain.Error{Kind: ErrMisdirected, Code: "misdirected_request", Message: fmt.Sprintf(
				"this service gives out sign-in and billing links only at its public address %s: open %s/account and try again there", s.base, s.base)}
		}
		return nil
	})
}

// DefaultBaseURL is the base URL of a service that listens on listen
// (host:port) when no public base URL is configured: http://host:port. An
// unspecified host (empty, 0.0.0.0, [::]) is reachable from outside under
// a name this process cannot know, so it becomes 127.0.0.1 (or [::1] for
// [::]) and unspecified reports it, for the caller to warn that links then
// work on this machine only.
func DefaultBaseURL(listen string) (base string, unspecified bool, err error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", false, fmt.Errorf("listen address %q: %w", listen, err)
	}
	if port == "" {
		return "", false, fmt.Errorf("listen address %q has no port", listen)
	}
	ip := net.ParseIP(host)
	switch {
	case host == "", ip != nil && ip.IsUnspecified() && ip.To4() != nil:
		host, unspecified = "127.0.0.1", true
	case ip != nil && ip.IsUnspecified():
		host, unspecified = "::1", true
	}
	return "http://" + net.JoinHostPort(host, port), unspecified, nil
}
