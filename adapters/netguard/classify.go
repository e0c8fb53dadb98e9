package netguard

import "net/netip"

// Class is what Classify says of one address.
type Class struct {
	// Public is true when the address is in no special-purpose block, or
	// in a block that carries an IPv4 address (IPv4-mapped, NAT64
	// well-known prefix, 6to4) whose IPv4 address is public.
	Public bool
	// Block is the most specific special-purpose block the address is in
	// (for a carried IPv4 address, the carrying IPv6 block); the zero
	// Prefix when the address is public.
	Block netip.Prefix
	// Reason names the block and its RFC, e.g. "shared address space
	// (RFC 6598)"; for a carried IPv4 address it names both blocks, e.g.
	// "IPv4-mapped (RFC 4291) for 10.0.0.1: private-use (RFC 1918)".
	// Empty when the address is public.
	Reason string
}

// Classify places addr in the special-purpose address registries. An IPv6
// zone is ignored. The zero Addr is not public.
func Classify(addr netip.Addr) Class {
	if !addr.IsValid() {
		return Class{Reason: "not an IP address"}
	}
	addr = addr.WithZone("")
	blk, ok := lookup(addr)
	if !ok {
		return Class{Public: true}
	}
	var inner netip.Addr
	switch blk.embed {
	case embedNone:
		return Class{Block: blk.prefix, Reason: blk.reason}
	case embedLow32:
		a := addr.As16()
		inner = netip.AddrFrom4([4]byte(a[12:16]))
	case embed6to4:
		a := addr.As16()
		inner = netip.AddrFrom4([4]byte(a[2:6]))
	}
	// The carried address is IPv4, so its lookup cannot carry again.
	in := Classify(inner)
	if in.Public {
		return Class{Public: true}
	}
	return Class{Block: blk.prefix, Reason: blk.reason + " for " + inner.String() + ": " + in.Reason}
}

// lookup returns the most specific registry block that holds addr.
func lookup(addr netip.Addr) (block, bool) {
	best, found := block{}, false
	for _, blk := range registry {
		if blk.prefix.Contains(addr) && (!found || blk.prefix.Bits() > best.prefix.Bits()) {
			best, found = blk, true
		}
	}
	return best, found
}
