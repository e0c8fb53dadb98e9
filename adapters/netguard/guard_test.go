package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/arr-dev/arr/adapters/netguard"
)

// interfaces returns a fixed interface-address source.
func interfaces(tb testing.TB, addrs ...string) func() ([]netip.Addr, error) {
	tb.Helper()
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = netip.MustParseAddr(a)
	}
	return func() ([]netip.Addr, error) { return out, nil }
}

// Check is pure here: the guard is given a table of interface addresses
// and nothing is dialled.
func TestGuardCheck(t *testing.T) {
	t.Parallel()
	g := netguard.New(netguard.Config{InterfaceAddrs: interfaces(t, "127.0.0.1", "::1", "8.8.4.4", "2606:4700::1111", "fe80::1%eth0")})
	cases := []struct {
		name   string
		addr   string
		reason string // "" when the address passes
	}{
		{name: "other public v4 passes", addr: "1.1.1.1"},
		{name: "other public v6 passes", addr: "2001:4860:4860::8888"},
		{name: "own public v4", addr: "8.8.4.4", reason: "this machine's own interfaces"},
		{name: "own public v4, IPv4-mapped", addr: "::ffff:8.8.4.4", reason: "own interfaces"},
		{name: "own public v4, NAT64 passes", addr: "64:ff9b::8.8.4.4"},
		{name: "own public v6", addr: "2606:4700::1111", reason: "own interfaces"},
		{name: "own public v6 with a zone", addr: "2606:4700::1111%eth0", reason: "own interfaces"},
		{name: "loopback names its block", addr: "127.0.0.1", reason: "loopback (RFC 1122)"},
		{name: "private", addr: "10.0.0.1", reason: "private-use (RFC 1918)"},
		{name: "shared address space", addr: "100.64.0.1", reason: "shared address space (RFC 6598)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := g.Check(netip.MustParseAddr(tc.addr))
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want nil", tc.addr, err)
				}
				return
			}
			var re *netguard.RefusedError
			if !errors.Is(err, netguard.ErrRefused) || !errors.As(err, &re) {
				t.Fatalf("Check(%s) = %v, want a *RefusedError", tc.addr, err)
			}
			if !strings.Contains(re.Reason, tc.reason) || !strings.Contains(err.Error(), tc.addr) {
				t.Errorf("Check(%s) = %q, want the address and %q", tc.addr, err, tc.reason)
			}
		})
	}
}

func TestGuardFailsClosed(t *testing.T) {
	t.Parallel()
	broken := errors.New("netlink unavailable")
	g := netguard.New(netguard.Config{InterfaceAddrs: func() ([]netip.Addr, error) { return nil, broken }})
	err := g.Check(netip.MustParseAddr("1.1.1.1"))
	if !errors.Is(err, netguard.ErrRefused) || !errors.Is(err, broken) {
		t.Fatalf("Check with unreadable interfaces = %v, want refused wrapping the read error", err)
	}
}

// Control parses the dialer's address; nothing is dialled.
func TestGuardControl(t *testing.T) {
	t.Parallel()
	g := netguard.New(netguard.Config{InterfaceAddrs: interfaces(t)})
	cases := []struct {
		name    string
		network string
		address string
		refused bool
	}{
		{name: "public v4", network: "tcp4", address: "1.1.1.1:443"},
		{name: "public v6", network: "tcp6", address: "[2606:4700::1111]:443"},
		{name: "loopback v4", network: "tcp4", address: "127.0.0.1:80", refused: true},
		{name: "mapped private", network: "tcp6", address: "[::ffff:192.168.0.1]:80", refused: true},
		{name: "link-local with zone", network: "tcp6", address: "[fe80::1%eth0]:80", refused: true},
		{name: "metadata", network: "tcp4", address: "169.254.169.254:80", refused: true},
		{name: "a name, not an address", network: "tcp", address: "localhost:80", refused: true},
		{name: "no port", network: "tcp", address: "1.1.1.1", refused: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := g.Control(tc.network, tc.address, nil)
			if tc.refused != errors.Is(err, netguard.ErrRefused) || (!tc.refused && err != nil) {
				t.Fatalf("Control(%s, %s) = %v, want refused %v", tc.network, tc.address, err, tc.refused)
			}
		})
	}
}

// The only dial in this package's tests: to a loopback listener the test
// starts, which the guard must refuse before connecting.
func TestGuardRefusesLoopbackDial(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listening on loopback: %v", err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	g := netguard.New(netguard.Config{InterfaceAddrs: interfaces(t)})
	d := net.Dialer{Timeout: 2 * time.Second, Control: g.Control}
	c, err := d.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err == nil {
		c.Close()
		t.Fatalf("dialing %s through the guard connected", ln.Addr())
	}
	var re *netguard.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "loopback (RFC 1122)") {
		t.Fatalf("dialing %s: %v, want a refusal naming loopback", ln.Addr(), err)
	}
	select {
	case <-accepted:
		t.Fatal("the loopback listener accepted a connection the guard should have refused")
	case <-time.After(50 * time.Millisecond):
	}
}

// SystemInterfaceAddrs lists interfaces; it opens no connection.
func TestSystemInterfaceAddrs(t *testing.T) {
	t.Parallel()
	addrs, err := netguard.SystemInterfaceAddrs()
	if err != nil {
		t.Fatalf("reading this machine's interface addresses: %v", err)
	}
	for _, a := range addrs {
		if !a.IsValid() || a.Is4In6() {
			t.Errorf("interface address %v is not a valid unmapped address", a)
		}
	}
}
