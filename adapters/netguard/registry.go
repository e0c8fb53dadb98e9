package netguard

import "net/netip"

// embed says whether, and where, a block carries an IPv4 address that
// decides instead of the block itself.
type embed uint8

const (
	embedNone  embed = iota
	embedLow32       // the last 32 bits: IPv4-mapped, NAT64 well-known prefix
	embed6to4        // bits 16 to 47: 6to4 (RFC 3056)
)

// block is one entry of a special-purpose registry.
type block struct {
	prefix netip.Prefix
	reason string
	embed  embed
}

func special(prefix, reason string) block {
	return block{prefix: netip.MustParsePrefix(prefix), reason: reason}
}

func carrier(prefix, reason string, e embed) block {
	return block{prefix: netip.MustParsePrefix(prefix), reason: reason, embed: e}
}

// registry holds the IANA IPv4 and IPv6 special-purpose address blocks
// (iana-ipv4-special-registry, iana-ipv6-special-registry), the multicast
// blocks, deprecated site-local and the IPv6 space outside global unicast.
// Sub-blocks are listed with their own reason; the most specific match
// decides. It is a constant table: it is never written after package
// initialization.
var registry = [...]block{
	// IPv4
	special("0.0.0.0/8", `"this network" (RFC 791, RFC 1122)`),
	special("10.0.0.0/8", "private-use (RFC 1918)"),
	special("100.64.0.0/10", "shared address space (RFC 6598)"),
	special("127.0.0.0/8", "loopback (RFC 1122)"),
	special("169.254.0.0/16", "link-local (RFC 3927)"),
	special("172.16.0.0/12", "private-use (RFC 1918)"),
	special("192.0.0.0/24", "IETF protocol assignments (RFC 6890)"),
	special("192.0.0.0/29", "IPv4 service continuity prefix (RFC 7335)"),
	special("192.0.0.8/32", "IPv4 dummy address (RFC 7600)"),
	special("192.0.0.9/32", "port control protocol anycast (RFC 7723)"),
	special("192.0.0.10/32", "TURN anycast (RFC 8155)"),
	special("192.0.0.170/32", "NAT64/DNS64 discovery (RFC 8880)"),
	special("192.0.0.171/32", "NAT64/DNS64 discovery (RFC 8880)"),
	special("192.0.2.0/24", "documentation, TEST-NET-1 (RFC 5737)"),
	special("192.31.196.0/24", "AS112-v4 (RFC 7535)"),
	special("192.52.193.0/24", "automatic multicast tunneling (RFC 7450)"),
	special("192.88.99.0/24", "deprecated 6to4 relay anycast (RFC 7526)"),
	special("192.168.0.0/16", "private-use (RFC 1918)"),
	special("192.175.48.0/24", "direct delegation AS112 service (RFC 7534)"),
	special("198.18.0.0/15", "benchmarking (RFC 2544)"),
	special("198.51.100.0/24", "documentation, TEST-NET-2 (RFC 5737)"),
	special("203.0.113.0/24", "documentation, TEST-NET-3 (RFC 5737)"),
	special("224.0.0.0/4", "multicast (RFC 5771)"),
	special("240.0.0.0/4", "reserved (RFC 1112)"),
	special("255.255.255.255/32", "limited broadcast (RFC 919, RFC 8190)"),

	// IPv6
	special("::/128", "unspecified (RFC 4291)"),
	special("::1/128", "loopback (RFC 4291)"),
	special("::/96", "IPv4-compatible, deprecated (RFC 4291)"),
	carrier("::ffff:0:0/96", "IPv4-mapped (RFC 4291)", embedLow32),
	carrier("64:ff9b::/96", "NAT64 well-known prefix (RFC 6052)", embedLow32),
	special("64:ff9b:1::/48", "NAT64 local-use prefix (RFC 8215)"),
	special("100::/64", "discard-only (RFC 6666)"),
	special("100:0:0:1::/64", "dummy IPv6 prefix (RFC 9780)"),
	special("2001::/23", "IETF protocol assignments (RFC 2928)"),
	special("2001::/32", "Teredo (RFC 4380)"),
	special("2001:1::1/128", "port control protocol anycast (RFC 7723)"),
	special("2001:1::2/128", "TURN anycast (RFC 8155)"),
	special("2001:1::3/128", "DNS-SD service registration protocol anycast (RFC 9665)"),
	special("2001:2::/48", "benchmarking (RFC 5180)"),
	special("2001:3::/32", "automatic multicast tunneling (RFC 7450)"),
	special("2001:4:112::/48", "AS112-v6 (RFC 7535)"),
	special("2001:10::/28", "deprecated ORCHID (RFC 4843)"),
	special("2001:20::/28", "ORCHIDv2 (RFC 7343)"),
	special("2001:30::/28", "drone remote ID entity tags (RFC 9374)"),
	special("2001:db8::/32", "documentation (RFC 3849)"),
	carrier("2002::/16", "6to4 (RFC 3056)", embed6to4),
	special("2620:4f:8000::/48", "direct delegation AS112 service (RFC 7534)"),
	special("3fff::/20", "documentation (RFC 9637)"),
	special("5f00::/16", "segment routing SIDs (RFC 9602)"),
	special("fc00::/7", "unique-local (RFC 4193)"),
	special("fe80::/10", "link-local (RFC 4291)"),
	special("fec0::/10", "site-local, deprecated (RFC 3879)"),
	special("ff00::/8", "multicast (RFC 4291)"),
	// Everything outside 2000::/3 that no entry above names.
	special("::/3", "outside IPv6 global unicast 2000::/3 (IANA IPv6 address space)"),
	special("4000::/2", "outside IPv6 global unicast 2000::/3 (IANA IPv6 address space)"),
	special("8000::/1", "outside IPv6 global unicast 2000::/3 (IANA IPv6 address space)"),
}
