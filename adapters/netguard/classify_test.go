package netguard_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/arr-dev/arr/adapters/netguard"
)

// Classification only: nothing here opens a connection.
func TestClassify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		addr   string
		block  string // the deciding block; "" for a public address
		reason string // a part of the reason
	}{
		// IPv4 special-purpose registry, each block and its sub-blocks.
		{name: "this network", addr: "0.0.0.0", block: "0.0.0.0/8", reason: "this network"},
		{name: "this network, top", addr: "0.255.255.255", block: "0.0.0.0/8", reason: "RFC 791"},
		{name: "private 10/8", addr: "10.1.2.3", block: "10.0.0.0/8", reason: "private-use (RFC 1918)"},
		{name: "shared address space", addr: "100.64.0.1", block: "100.64.0.0/10", reason: "shared address space (RFC 6598)"},
		{name: "shared address space, top", addr: "100.127.255.254", block: "100.64.0.0/10", reason: "RFC 6598"},
		{name: "alibaba metadata in shared space", addr: "100.100.100.200", block: "100.64.0.0/10", reason: "RFC 6598"},
		{name: "loopback", addr: "127.0.0.1", block: "127.0.0.0/8", reason: "loopback"},
		{name: "loopback, other", addr: "127.255.0.9", block: "127.0.0.0/8", reason: "loopback"},
		{name: "link-local", addr: "169.254.1.1", block: "169.254.0.0/16", reason: "link-local (RFC 3927)"},
		{name: "cloud metadata", addr: "169.254.169.254", block: "169.254.0.0/16", reason: "link-local"},
		{name: "private 172.16/12", addr: "172.16.0.1", block: "172.16.0.0/12", reason: "RFC 1918"},
		{name: "private 172.16/12, top", addr: "172.31.255.255", block: "172.16.0.0/12", reason: "RFC 1918"},
		{name: "IETF protocol assignments", addr: "192.0.0.100", block: "192.0.0.0/24", reason: "IETF protocol assignments (RFC 6890)"},
		{name: "IPv4 service continuity", addr: "192.0.0.1", block: "192.0.0.0/29", reason: "RFC 7335"},
		{name: "IPv4 dummy address", addr: "192.0.0.8", block: "192.0.0.8/32", reason: "RFC 7600"},
		{name: "PCP anycast v4", addr: "192.0.0.9", block: "192.0.0.9/32", reason: "RFC 7723"},
		{name: "TURN anycast v4", addr: "192.0.0.10", block: "192.0.0.10/32", reason: "RFC 8155"},
		{name: "NAT64 discovery 170", addr: "192.0.0.170", block: "192.0.0.170/32", reason: "RFC 8880"},
		{name: "NAT64 discovery 171", addr: "192.0.0.171", block: "192.0.0.171/32", reason: "RFC 8880"},
		{name: "TEST-NET-1", addr: "192.0.2.7", block: "192.0.2.0/24", reason: "TEST-NET-1 (RFC 5737)"},
		{name: "AS112-v4", addr: "192.31.196.1", block: "192.31.196.0/24", reason: "RFC 7535"},
		{name: "AMT v4", addr: "192.52.193.1", block: "192.52.193.0/24", reason: "RFC 7450"},
		{name: "6to4 relay anycast", addr: "192.88.99.1", block: "192.88.99.0/24", reason: "RFC 7526"},
		{name: "private 192.168/16", addr: "192.168.1.1", block: "192.168.0.0/16", reason: "RFC 1918"},
		{name: "direct delegation AS112 v4", addr: "192.175.48.6", block: "192.175.48.0/24", reason: "RFC 7534"},
		{name: "benchmarking", addr: "198.18.0.1", block: "198.18.0.0/15", reason: "benchmarking (RFC 2544)"},
		{name: "benchmarking, second half", addr: "198.19.255.255", block: "198.18.0.0/15", reason: "RFC 2544"},
		{name: "TEST-NET-2", addr: "198.51.100.20", block: "198.51.100.0/24", reason: "TEST-NET-2"},
		{name: "TEST-NET-3", addr: "203.0.113.9", block: "203.0.113.0/24", reason: "TEST-NET-3"},
		{name: "multicast v4", addr: "224.0.0.251", block: "224.0.0.0/4", reason: "multicast"},
		{name: "multicast v4, top", addr: "239.255.255.250", block: "224.0.0.0/4", reason: "multicast"},
		{name: "reserved 240/4", addr: "240.0.0.1", block: "240.0.0.0/4", reason: "reserved (RFC 1112)"},
		{name: "reserved 240/4, top", addr: "255.255.255.254", block: "240.0.0.0/4", reason: "reserved"},
		{name: "limited broadcast", addr: "255.255.255.255", block: "255.255.255.255/32", reason: "limited broadcast"},

		// Public IPv4, including neighbours of refused blocks.
		{name: "public google dns", addr: "8.8.8.8"},
		{name: "public cloudflare dns", addr: "1.1.1.1"},
		{name: "public below shared space", addr: "100.63.255.255"},
		{name: "public above shared space", addr: "100.128.0.0"},
		{name: "public below 172.16/12", addr: "172.15.255.255"},
		{name: "public above 172.16/12", addr: "172.32.0.0"},
		{name: "public 192.0.1.1", addr: "192.0.1.1"},
		{name: "public above benchmarking", addr: "198.20.0.1"},
		{name: "public below multicast", addr: "223.255.255.255"},

		// IPv6 special-purpose registry.
		{name: "unspecified v6", addr: "::", block: "::/128", reason: "unspecified"},
		{name: "loopback v6", addr: "::1", block: "::1/128", reason: "loopback (RFC 4291)"},
		{name: "IPv4-compatible", addr: "::8.8.8.8", block: "::/96", reason: "IPv4-compatible"},
		{name: "NAT64 local-use", addr: "64:ff9b:1::8.8.8.8", block: "64:ff9b:1::/48", reason: "RFC 8215"},
		{name: "discard-only", addr: "100::1", block: "100::/64", reason: "discard-only (RFC 6666)"},
		{name: "dummy prefix", addr: "100:0:0:1::1", block: "100:0:0:1::/64", reason: "RFC 9780"},
		{name: "IETF protocol assignments v6", addr: "2001:100::1", block: "2001::/23", reason: "RFC 2928"},
		{name: "IETF protocol assignments v6, top", addr: "2001:1ff:ffff::1", block: "2001::/23", reason: "RFC 2928"},
		{name: "Teredo", addr: "2001:0:4136:e378:8000:63bf:3fff:fdd2", block: "2001::/32", reason: "Teredo"},
		{name: "PCP anycast v6", addr: "2001:1::1", block: "2001:1::1/128", reason: "RFC 7723"},
		{name: "TURN anycast v6", addr: "2001:1::2", block: "2001:1::2/128", reason: "RFC 8155"},
		{name: "DNS-SD SRP anycast", addr: "2001:1::3", block: "2001:1::3/128", reason: "RFC 9665"},
		{name: "benchmarking v6", addr: "2001:2::1", block: "2001:2::/48", reason: "RFC 5180"},
		{name: "AMT v6", addr: "2001:3::1", block: "2001:3::/32", reason: "RFC 7450"},
		{name: "AS112-v6", addr: "2001:4:112::1", block: "2001:4:112::/48", reason: "RFC 7535"},
		{name: "deprecated ORCHID", addr: "2001:10::1", block: "2001:10::/28", reason: "RFC 4843"},
		{name: "ORCHIDv2", addr: "2001:20::1", block: "2001:20::/28", reason: "RFC 7343"},
		{name: "drone remote ID", addr: "2001:30::1", block: "2001:30::/28", reason: "RFC 9374"},
		{name: "documentation 2001:db8", addr: "2001:db8::1", block: "2001:db8::/32", reason: "documentation (RFC 3849)"},
		{name: "direct delegation AS112 v6", addr: "2620:4f:8000::1", block: "2620:4f:8000::/48", reason: "RFC 7534"},
		{name: "documentation 3fff", addr: "3fff:fff:ffff::1", block: "3fff::/20", reason: "documentation (RFC 9637)"},
		{name: "segment routing", addr: "5f00::1", block: "5f00::/16", reason: "RFC 9602"},
		{name: "unique-local fc", addr: "fc00::1", block: "fc00::/7", reason: "unique-local"},
		{name: "unique-local fd, AWS metadata", addr: "fd00:ec2::254", block: "fc00::/7", reason: "RFC 4193"},
		{name: "link-local v6", addr: "fe80::1", block: "fe80::/10", reason: "link-local (RFC 4291)"},
		{name: "link-local v6 with zone", addr: "fe80::1%eth0", block: "fe80::/10", reason: "link-local"},
		{name: "site-local", addr: "fec0::1", block: "fec0::/10", reason: "site-local"},
		{name: "multicast v6", addr: "ff02::1", block: "ff00::/8", reason: "multicast (RFC 4291)"},
		{name: "outside global unicast, low", addr: "1000::1", block: "::/3", reason: "2000::/3"},
		{name: "outside global unicast, 4000::/2", addr: "4000::1", block: "4000::/2", reason: "2000::/3"},
		{name: "outside global unicast, 8000::/1", addr: "e000::1", block: "8000::/1", reason: "2000::/3"},

		// Public IPv6.
		{name: "public cloudflare v6", addr: "2606:4700::1111"},
		{name: "public google v6", addr: "2001:4860:4860::8888"},
		{name: "public just past 2001::/23", addr: "2001:200::1"},
		{name: "public just past 3fff::/20", addr: "3fff:1000::1"},

		// IPv6 blocks that carry an IPv4 address are classified by it.
		{name: "mapped loopback", addr: "::ffff:127.0.0.1", block: "::ffff:0:0/96", reason: "IPv4-mapped (RFC 4291) for 127.0.0.1: loopback"},
		{name: "mapped private", addr: "::ffff:10.0.0.1", block: "::ffff:0:0/96", reason: "private-use (RFC 1918)"},
		{name: "mapped shared space", addr: "::ffff:100.64.1.1", block: "::ffff:0:0/96", reason: "RFC 6598"},
		{name: "mapped metadata", addr: "::ffff:169.254.169.254", block: "::ffff:0:0/96", reason: "link-local"},
		{name: "mapped public", addr: "::ffff:8.8.8.8"},
		{name: "NAT64 private", addr: "64:ff9b::10.0.0.1", block: "64:ff9b::/96", reason: "NAT64 well-known prefix (RFC 6052) for 10.0.0.1: private-use"},
		{name: "NAT64 loopback", addr: "64:ff9b::7f00:1", block: "64:ff9b::/96", reason: "loopback"},
		{name: "NAT64 reserved", addr: "64:ff9b::240.0.0.1", block: "64:ff9b::/96", reason: "reserved"},
		{name: "NAT64 public", addr: "64:ff9b::8.8.8.8"},
		{name: "NAT64 public cloudflare", addr: "64:ff9b::101:101"},
		{name: "6to4 private", addr: "2002:c0a8:101::1", block: "2002::/16", reason: "6to4 (RFC 3056) for 192.168.1.1: private-use"},
		{name: "6to4 loopback", addr: "2002:7f00:1::", block: "2002::/16", reason: "loopback"},
		{name: "6to4 benchmarking", addr: "2002:c612:1::1", block: "2002::/16", reason: "benchmarking"},
		{name: "6to4 public", addr: "2002:808:808::1"},
		{name: "6to4 public cloudflare", addr: "2002:101:101:1::1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := netguard.Classify(netip.MustParseAddr(tc.addr))
			if tc.block == "" {
				if !c.Public || c.Reason != "" || c.Block.IsValid() {
					t.Fatalf("Classify(%s) = %+v, want public", tc.addr, c)
				}
				return
			}
			if c.Public {
				t.Fatalf("Classify(%s) is public, want refused by %s", tc.addr, tc.block)
			}
			if c.Block != netip.MustParsePrefix(tc.block) {
				t.Errorf("Classify(%s).Block = %s, want %s", tc.addr, c.Block, tc.block)
			}
			if !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("Classify(%s).Reason = %q, want it to contain %q", tc.addr, c.Reason, tc.reason)
			}
		})
	}
}

func TestClassifyZeroAddr(t *testing.T) {
	t.Parallel()
	if c := netguard.Classify(netip.Addr{}); c.Public || c.Reason == "" {
		t.Fatalf("Classify(zero Addr) = %+v, want refused with a reason", c)
	}
}
