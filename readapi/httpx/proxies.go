package httpx

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gin-gonic/gin"
)

// ParseTrustedProxies parses a comma-separated list of IP addresses and
// CIDR prefixes (ARR_TRUSTED_PROXIES): "10.0.0.0/8, 192.0.2.7, ::1". Each
// entry must parse on its own: an empty entry, a zone, or a prefix with
// host bits set (10.0.0.1/8) is an error naming it. "" is no proxies.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []netip.Prefix
	for _, raw := range strings.Split(s, ",") {
		e := strings.TrimSpace(raw)
		if e == "" {
			return nil, fmt.Errorf("empty entry in %q: separate IP addresses and CIDR prefixes with single commas", s)
		}
		if strings.Contains(e, "%") {
			return nil, fmt.Errorf("%q: zoned addresses are not supported", e)
		}
		if strings.Contains(e, "/") {
			p, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR prefix: %w", e, err)
			}
			if p != p.Masked() {
				return nil, fmt.Errorf("%q has host bits set (did you mean %s)", e, p.Masked())
			}
			if p.Addr().Is4In6() && p.Bits() >= 96 { // peers are compared unmapped
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			out = append(out, p)
			continue
		}
		a, err := netip.ParseAddr(e)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR prefix: %w", e, err)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// trustedPeerKey marks a request whose TCP peer is a trusted proxy.
const trustedPeerKey = "arr.trusted_proxy"

// markTrustedPeer notes whether the request's TCP peer is one of trusted,
// for ViaTrustedProxy. It reads the peer only, never a header.
func markTrustedPeer(trusted []netip.Prefix) gin.HandlerFunc {
	return func(c *gin.Context) {
		if len(trusted) > 0 {
			if a, err := netip.ParseAddr(c.RemoteIP()); err == nil {
				a = a.Unmap()
				for _, p := range trusted {
					if p.Contains(a) {
						c.Set(trustedPeerKey, true)
						break
					}
				}
			}
		}
		c.Next()
	}
}

// ViaTrustedProxy reports whether the request's TCP peer is a configured
// trusted proxy (Base.TrustedProxies), whose X-Forwarded-* headers may then
// be believed. False outside an engine of NewEngine.
func ViaTrustedProxy(c *gin.Context) bool { return c.GetBool(trustedPeerKey) }

// forwarded is the last value of a comma-separated X-Forwarded-* header:
// the one the nearest proxy, the trusted one, added.
func forwarded(c *gin.Context, name string) string {
	v := c.GetHeader(name)
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return strings.TrimSpace(v)
}

// RequestHost is the host the client named: X-Forwarded-Host when a
// trusted proxy sent it, else the Host header. It decides whether a request
// may be given links (RequireSiteHost); it never becomes part of one.
func RequestHost(c *gin.Context) string {
	if ViaTrustedProxy(c) {
		if h := forwarded(c, "X-Forwarded-Host"); h != "" {
			return h
		}
	}
	return c.Request.Host
}
