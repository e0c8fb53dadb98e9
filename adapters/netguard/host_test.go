package netguard_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/arr-dev/arr/adapters/netguard"
)

// TestParseHost: hosts are read as the resolver reads them, by parsing
// alone: no name here is ever looked up and nothing connects.
func TestParseHost(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, host string
		want       string // the normalized host; "" when refused
	}{
		{"dotted quad", "127.0.0.1", "127.0.0.1"},
		{"one decimal number", "2130706433", "127.0.0.1"},
		{"one hex number", "0x7f000001", "127.0.0.1"},
		{"upper-case hex", "0X7F000001", "127.0.0.1"},
		{"hex and a short form", "0x7f.1", "127.0.0.1"},
		{"two parts", "127.1", "127.0.0.1"},
		{"three parts", "127.0.1", "127.0.0.1"},
		{"octal", "0177.0.0.1", "127.0.0.1"},
		{"octal 10/8", "012.0.0.1", "10.0.0.1"},
		{"mixed bases", "0xa9.0376.43518", "169.254.169.254"},
		{"a trailing dot on an address", "127.0.0.1.", "127.0.0.1"},
		{"zero", "0", "0.0.0.0"},
		{"bare 0x", "0x", "0.0.0.0"},
		{"decimal public", "134744072", "8.8.8.8"},
		{"largest", "4294967295", "255.255.255.255"},
		{"IPv6 loopback", "::1", "::1"},
		{"IPv4-mapped", "::ffff:127.0.0.1", "::ffff:127.0.0.1"},
		{"IPv4-mapped in hex", "::ffff:7f00:1", "::ffff:127.0.0.1"},
		{"IPv6 with a zone", "fe80::1%eth0", "fe80::1%eth0"},
		{"a name", "hooks.Example.COM", "hooks.example.com"},
		{"a name with a trailing dot", "hooks.example.com.", "hooks.example.com"},
		{"localhost upper-case with a dot", "LOCALHOST.", "localhost"},
		{"a name with a numeric label inside", "1.example.com", "1.example.com"},
		{"a hex-looking last label that is not hex", "a.0xg", "a.0xg"},
		// Refused: numbers that are not addresses, as browsers refuse them.
		{"over 32 bits", "4294967296", ""},
		{"a part over 255", "256.0.0.1", ""},
		{"a last part over its range", "1.2.65536", ""},
		{"five parts", "1.2.3.4.5", ""},
		{"bad octal", "08.0.0.1", ""},
		{"a name before a number", "example.1", ""},
		{"two trailing dots", "127.0.0.1..", ""},
		{"an empty label", "a..b", ""},
		{"empty", "", ""},
		{"a bad IPv6", "1::2::3", ""},
		{"an IPv4 with a colon", "127.0.0.1:80", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, err := netguard.ParseHost(tc.host)
			if tc.want == "" {
				if err == nil || !errors.Is(err, netguard.ErrInvalidHost) {
					t.Fatalf("ParseHost(%q) = %+v, %v; want ErrInvalidHost", tc.host, h, err)
				}
				return
			}
			if err != nil || h.String() != tc.want {
				t.Fatalf("ParseHost(%q) = %q, %v; want %q", tc.host, h.String(), err, tc.want)
			}
		})
	}
}

// TestCheckHost: the one check of a URL's host, at a monitor's creation
// and before each delivery: every form of a refused address is refused,
// a localhost name is refused, this machine's own public address is
// refused; other names pass (they are checked after DNS, per connection).
func TestCheckHost(t *testing.T) {
	t.Parallel()
	own := netip.MustParseAddr("203.0.114.7") // public, as a server's own may be
	g := netguard.New(netguard.Config{InterfaceAddrs: func() ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), own}, nil
	}})
	for _, tc := range []struct {
		host    string
		refused bool
	}{
		{"2130706433", true}, {"0x7f.1", true}, {"127.1", true}, {"0177.0.0.1", true}, {"127.0.0.1.", true},
		{"::ffff:127.0.0.1", true}, {"::ffff:a9fe:a9fe", true}, {"0xa9.0xfe.0xa9.0xfe", true}, {"167772161", true},
		{"0", true}, {"::", true}, {"64:ff9b::7f00:1", true},
		{"localhost", true}, {"LOCALHOST.", true}, {"api.localhost", true},
		{"3405804039", true}, // 203.0.114.7, this machine's own
		{"134744072", false}, {"::ffff:8.8.8.8", false}, {"hooks.example.com", false}, {"localhost.example.com", false},
	} {
		h, err := netguard.ParseHost(tc.host)
		if err != nil {
			t.Fatalf("ParseHost(%q): %v", tc.host, err)
		}
		err = g.CheckHost(h)
		if tc.refused != (err != nil) || (err != nil && !errors.Is(err, netguard.ErrRefused)) {
			t.Errorf("CheckHost(%q) = %v, want refused %v", tc.host, err, tc.refused)
		}
	}
}
