package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// ErrRefused matches every refusal of a Guard.
var ErrRefused = errors.New("address refused")

// RefusedError is a refused address and the reason. It matches ErrRefused
// with errors.Is.
type RefusedError struct {
	Addr netip.Addr
	// Host is the refused name when there is no address (CheckHost of a
	// localhost name).
	Host   string
	Reason string
}

func (e *RefusedError) Error() string {
	if !e.Addr.IsValid() {
		return fmt.Sprintf("host %s is not public: %s", e.Host, e.Reason)
	}
	return fmt.Sprintf("address %s is not public: %s", e.Addr, e.Reason)
}

// Unwrap returns ErrRefused.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// Config configures a Guard.
type Config struct {
	// InterfaceAddrs lists this machine's own addresses. Default: the
	// addresses of net.InterfaceAddrs. Tests inject a table.
	InterfaceAddrs func() ([]netip.Addr, error)
}

// Guard refuses addresses that are not public (see Classify) and this
// machine's own interface addresses. A Guard is safe for concurrent use.
type Guard struct {
	interfaceAddrs func() ([]netip.Addr, error)
}

// New returns a Guard.
func New(cfg Config) *Guard {
	if cfg.InterfaceAddrs == nil {
		cfg.InterfaceAddrs = SystemInterfaceAddrs
	}
	return &Guard{interfaceAddrs: cfg.InterfaceAddrs}
}

// Check returns nil when a connection to addr may be made, and a
// *RefusedError otherwise. It fails closed: when the interface addresses
// cannot be read, addr is refused.
//
// The interface addresses are read on every call rather than cached. A
// Check precedes a TCP connect (and usually a TLS handshake) to a remote
// host, which costs milliseconds; listing the interfaces costs
// microseconds. Reading each time leaves no window in which an address
// added since the last read (DHCP, a VPN coming up, a container network)
// is reachable, and leaves the Guard no mutable state to share.
func (g *Guard) Check(addr netip.Addr) error {
	c := Classify(addr)
	if !c.Public {
		return &RefusedError{Addr: addr, Reason: c.Reason}
	}
	own, err := g.interfaceAddrs()
	if err != nil {
		return fmt.Errorf("checking %s against this machine's interface addresses: %w: %w", addr, err, ErrRefused)
	}
	a := addr.WithZone("").Unmap()
	for _, o := range own {
		if o.WithZone("").Unmap() == a {
			return &RefusedError{Addr: addr, Reason: "an address of this machine's own interfaces"}
		}
	}
	return nil
}

// Control checks the address a net.Dialer is about to connect to; set it
// as the dialer's Control func. The dialer calls it for every attempt with
// the resolved IP address, so names that resolve to refused addresses and
// redirects to them are refused too. A transport that dials through a
// proxy checks the proxy's address, not the target's.
func (g *Guard) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dialing %s %q: not an IP address and port: %w", network, address, ErrRefused)
	}
	return g.Check(ap.Addr())
}

// SystemInterfaceAddrs returns the addresses of this machine's network
// interfaces (net.InterfaceAddrs).
func SystemInterfaceAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("listing interface addresses: %w", err)
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		var ip net.IP
		switch v := a.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		}
		if x, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, x.Unmap())
		}
	}
	return out, nil
}
