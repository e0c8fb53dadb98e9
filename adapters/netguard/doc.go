// Package netguard keeps outbound connections to caller-supplied URLs on
// the public internet: the server-side request forgery (SSRF) guard of
// arr's fetchers.
//
// Classify is pure: it places an address in the IANA IPv4 and IPv6
// special-purpose address registries (plus IPv4 multicast 224.0.0.0/4,
// IPv6 multicast ff00::/8, deprecated site-local fec0::/10 and all IPv6
// outside the global unicast space 2000::/3) and names the block and its
// RFC, e.g. "shared address space (RFC 6598)". Every block of those
// registries is refused, including the ones the registry marks globally
// reachable (AS112, AMT, protocol anycast, ORCHIDv2, ...): a page fetcher
// has no business with them. That covers loopback, RFC 1918 private use,
// CGNAT shared space 100.64.0.0/10, link-local (and so cloud metadata at
// 169.254.169.254 and fd00:ec2::254), benchmarking, documentation,
// reserved 240.0.0.0/4, broadcast, unique-local and unspecified addresses.
// Three IPv6 blocks carry an IPv4 address and are classified by it:
// IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96 (the well-known prefix;
// the local-use 64:ff9b:1::/48 is refused outright) and 6to4 2002::/16.
// So ::ffff:10.0.0.1 is refused and 64:ff9b::8.8.8.8 passes.
//
// A Guard adds the machine's own interface addresses (a public address
// of this host reaches arr's own listeners) and plugs into a net.Dialer
// as its Control func, which runs for every connection attempt with the
// address DNS resolved to, after every redirect: a public name that
// resolves to 10.0.0.1, and a redirect to http://127.0.0.1/, are both
// refused. Refusals match ErrRefused and are *RefusedError values.
//
// A URL's host is read before any of that by ParseHost, as resolvers and
// browsers read it (case, a trailing dot, every numeric IPv4 form such as
// 2130706433, 0x7f.1, 127.1 or 0177.0.0.1, IPv6 literals), after the
// IDNA mapping net/http applies before it dials (fullwidth digits, the
// ideographic full stop, enclosed letters), and
// Guard.CheckHost checks it without a look-up: an address as Check does, a
// localhost name as this machine. A monitor's URL at creation and each
// delivery before it dials go through that one check, so they cannot
// disagree; the stored and dialed host is ParseHost's normal form.
//
// A Guard is safe for concurrent use; Classify and ParseHost are pure.
package netguard
