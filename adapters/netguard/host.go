package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Host is a URL's host as the resolver reads it: an address or a name.
type Host struct {
	// Addr is the address a numeric host is; the zero Addr for a name.
	Addr netip.Addr
	// Name is a host name, lower-cased, without its trailing dot; "" for
	// an address.
	Name string
}

// String is the host as a URL carries it once normalized: a dotted-quad
// IPv4 address, an IPv6 address (without brackets) or the name.
func (h Host) String() string {
	if h.Addr.IsValid() {
		return h.Addr.String()
	}
	return h.Name
}

// URLHost is the host field of a URL (url.URL.Host) for h and port
// ("" for none): an IPv6 address in brackets, its zone escaped.
func (h Host) URLHost(port string) string {
	s := h.String()
	if h.Addr.Is6() {
		s = strings.ReplaceAll(s, "%", "%25")
		if port == "" {
			return "[" + s + "]"
		}
	}
	if port == "" {
		return s
	}
	return net.JoinHostPort(s, port)
}

// ErrInvalidHost matches every error of ParseHost.
var ErrInvalidHost = errors.New("invalid host")

// ParseHost reads host, a URL's host without port and brackets
// (url.URL.Hostname), the way resolvers and browsers read it, without
// any look-up:
//
//   - a host that is not all ASCII is first mapped exactly as net/http
//     maps it before it dials (IDNA UTS #46, golang.org/x/net/idna's
//     Lookup profile, net/http's idnaASCII): fullwidth digits, the
//     ideographic full stop and enclosed letters become ASCII, so
//     "１２７。０。０。１" is 127.0.0.1 and "ⓛⓞⓒⓐⓛⓗⓞⓢⓣ" localhost; one the
//     mapping refuses is refused (net/http would dial it unmapped);
//   - an IPv6 literal (with a zone or not; IPv4-mapped ones included) is
//     that address;
//   - otherwise the host is lower-cased and one trailing dot dropped
//     (example.COM. is example.com);
//   - a host whose last label is a number (decimal, octal with a leading
//     0, hexadecimal with 0x) is an IPv4 address in any of the forms
//     inet_aton(3) and the WHATWG URL standard accept: 2130706433,
//     0x7f000001, 0x7f.1, 127.1, 127.0.1, 0177.0.0.1 are all 127.0.0.1;
//     one that is not a valid address (a part over its range, a letter
//     in a number, a name before a number) is refused, as browsers
//     refuse it, rather than left to a resolver that might read it
//     otherwise;
//   - anything else is a name (an empty label is refused).
//
// Errors match ErrInvalidHost. Pure; safe for concurrent use.
func ParseHost(host string) (Host, error) {
	if host == "" {
		return Host{}, fmt.Errorf("an empty host: %w", ErrInvalidHost)
	}
	if !isASCII(host) {
		mapped, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return Host{}, fmt.Errorf("host %q is not a name IDNA maps (%v): %w", host, err, ErrInvalidHost)
		}
		host = mapped
	}
	if strings.Contains(host, ":") {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return Host{}, fmt.Errorf("host %q is not an IPv6 address: %w", host, ErrInvalidHost)
		}
		return Host{Addr: a}, nil
	}
	name := strings.ToLower(host)
	labels := strings.Split(name, ".")
	if len(labels) > 1 && labels[len(labels)-1] == "" {
		labels = labels[:len(labels)-1]
		name = name[:len(name)-1]
	}
	for _, l := range labels {
		if l == "" {
			return Host{}, fmt.Errorf("host %q has an empty label: %w", host, ErrInvalidHost)
		}
	}
	if !isNumber(labels[len(labels)-1]) {
		return Host{Name: name}, nil
	}
	a, ok := parseIPv4(labels)
	if !ok {
		return Host{}, fmt.Errorf("host %q ends in a number but is not an IPv4 address: %w", host, ErrInvalidHost)
	}
	return Host{Addr: a}, nil
}

// isASCII reports whether s is all ASCII, which net/http dials as it is.
func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// isNumber reports whether a label is written as a number: decimal
// digits, or 0x and hexadecimal digits (none too: 0x is 0).
func isNumber(l string) bool {
	if len(l) >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X') {
		for _, c := range l[2:] {
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
		return true
	}
	for _, c := range l {
		if c < '0' || c > '9' {
			return false
		}
	}
	return l != ""
}

// parseIPv4 reads one to four numeric parts as inet_aton(3) does: each
// of the first parts is one byte, the last fills the bytes left.
func parseIPv4(parts []string) (netip.Addr, bool) {
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v = v<<8 | n
			continue
		}
		rest := uint(8 * (4 - i))
		if n >= 1<<rest {
			return netip.Addr{}, false
		}
		v = v<<rest | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Part(p string) (uint64, bool) {
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil || strings.ContainsAny(p, "+-_") {
		return 0, false
	}
	return n, true
}

// IsLocalhost reports whether a name is localhost or under it (RFC 6761
// section 6.3: resolvers answer such names with loopback addresses
// themselves, without asking DNS).
func IsLocalhost(name string) bool {
	return name == "localhost" || strings.HasSuffix(name, ".localhost")
}

// CheckHost is Check for a URL's host before any look-up: an address
// (in any of ParseHost's forms) is checked as Check checks it; a
// localhost name is refused as this machine; any other name passes here
// and is checked, after DNS, for every connection (Control). The check
// of a monitor's URL at creation and the check before each delivery are
// both this one, so they cannot disagree. Errors match ErrRefused.
func (g *Guard) CheckHost(h Host) error {
	if h.Addr.IsValid() {
		return g.Check(h.Addr)
	}
	if IsLocalhost(h.Name) {
		return &RefusedError{Host: h.Name, Reason: "a localhost name (RFC 6761): this machine"}
	}
	return nil
}
